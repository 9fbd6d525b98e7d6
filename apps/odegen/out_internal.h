/* out_internal.h - hpc-odegen's output, shared by output.c (the layout)
 * and rows.c (writing the rows of finished chunks). */
#ifndef ODE_OUT_INTERNAL_H
#define ODE_OUT_INTERNAL_H

#include "odegen.h"

/* the datasets rows.c writes: x0, y, nsteps, nfev, nrejected, status;
 * and per event of the system: count, t, y (events/NAME/...) */
#define ODE_NROWS 6
#define ODE_EVROWS 3

struct ode_out {
    hpc_out_t *out;
    hid_t t, x0, y, nsteps, nfev, nrej, status, traj, component;
    const ode_opts_t *o;
    /* raw rows (rows.c), all or none; none: an older file's layout,
     * written through HDF5 in the main thread */
    hpc_h5_raw_t *raw[ODE_NROWS];
    /* the events' datasets and their raw rows */
    int nev;
    hid_t evd[ODE_MAXEV][ODE_EVROWS];
    hpc_h5_raw_t *evraw[ODE_MAXEV][ODE_EVROWS];
    /* the writer thread's own scratch: a chunk in the file's types */
    void *xbuf, *ybuf;             /* float32 (--dtype float32) */
    int32_t *ibuf;
    int8_t *sbuf;
    double *evbuf;                 /* one event's t or y rows of a chunk */
    void *evfbuf;                  /* the same in float32 */
};

/* rows.c: after the layout is created or opened (collective in effect:
 * every rank reaches the same verdict on the same file) */
int ode_rows_open(ode_out_t *w);
void ode_rows_close(ode_out_t *w);

#endif
