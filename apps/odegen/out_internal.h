/* out_internal.h - hpc-odegen's output, shared by output.c (the layout)
 * and rows.c (writing the rows of finished chunks). */
#ifndef ODE_OUT_INTERNAL_H
#define ODE_OUT_INTERNAL_H

#include "odegen.h"

/* the datasets rows.c writes: x0, y, nsteps, nfev, nrejected, status */
#define ODE_NROWS 6

struct ode_out {
    hpc_out_t *out;
    hid_t t, x0, y, nsteps, nfev, nrej, status, traj, component;
    const ode_opts_t *o;
    /* raw rows (rows.c), all or none; none: an older file's layout,
     * written through HDF5 in the main thread */
    hpc_h5_raw_t *raw[ODE_NROWS];
    /* the writer thread's own scratch: a chunk in the file's types */
    void *xbuf, *ybuf;             /* float32 (--dtype float32) */
    int32_t *ibuf;
    int8_t *sbuf;
};

/* rows.c: after the layout is created or opened (collective in effect:
 * every rank reaches the same verdict on the same file) */
int ode_rows_open(ode_out_t *w);
void ode_rows_close(ode_out_t *w);

#endif
