/* ode_texts.h - sources hpc-odegen carries as text (build-aux/embed.sh
 * makes odegen_texts.c): its engine and hpc_ode.h, which it compiles with
 * a user's system at run time (sysfile.c, and NVRTC for the GPU), and the
 * built-in systems' files, recorded in every output so that a dataset can
 * be made again from the file alone. */
#ifndef ODE_TEXTS_H
#define ODE_TEXTS_H

typedef struct {
    const char *name; /* the file's base name: "erk.h", "lorenz.c" */
    const char *text;
} ode_text_t;

extern const ode_text_t ode_texts[];
extern const int ode_ntexts;

/* The text of name, or NULL. */
const char *ode_text(const char *name);

#endif
