/* pmpi.h - what the files of libhpc-mpi.so (the PMPI drop-in) share.
 * Nothing here is exported: the drop-in's only exports are the MPI_*
 * functions it defines. */
#ifndef HPC_PMPI_H
#define HPC_PMPI_H

#include <mpi.h>
#include <stddef.h>
#include "hpc_coll.h"

#define PM_HIDDEN __attribute__((visibility("hidden")))

/* > 0: inside libhpc (or the drop-in's own MPI calls): pass everything on */
extern PM_HIDDEN int pm_depth;

/* ---- datatype.c: MPI datatypes as libhpc sees them ------------------ */
/* A reduction's count elements of t as libhpc elements (*dt, *n): t is a
 * type libhpc reduces, or a duplicate or contiguous run of one; 0 if not. */
PM_HIDDEN int pm_red_type(MPI_Datatype t, int count, hpc_dtype_t *dt, size_t *n);
/* Bytes of data in count elements of t (the type signature's size, the
 * same on every rank of a correct call); -1 for a type MPI refuses. */
PM_HIDDEN int pm_bytes(MPI_Datatype t, size_t count, size_t *bytes);

/* One buffer argument of a data-movement call as libhpc moves it: the
 * caller's buffer itself where its type is dense (the signature's bytes
 * in order, no gaps), else a packed copy. */
typedef struct {
    void *user;           /* the caller's buffer */
    size_t n;             /* elements of type there */
    MPI_Datatype type;    /* the caller's type, or our duplicate of it (dup) */
    char *tmp;            /* the packed bytes libhpc moves; NULL: user directly */
    int dup, out;         /* type is ours to free; unpack tmp into user at the end */
} pm_view_t;
enum { PM_IN = 1, PM_OUT = 2 };
/* Set *v up for n elements of t at buf, PM_IN (its data goes in: packed
 * now) and/or PM_OUT (data comes out: unpacked by pm_view_end); *lib:
 * the buffer to give libhpc.  0, or -1 with *why. */
PM_HIDDEN int pm_view(pm_view_t *v, const void *buf, size_t n, MPI_Datatype t, int how, void **lib,
                      const char **why);
/* Pack elements first..first+n-1 only (an in-place block that goes in). */
PM_HIDDEN int pm_view_pack(pm_view_t *v, size_t first, size_t n, const char **why);
/* Unpack (PM_OUT) and free; 0, or -1 with *why (all is freed either way). */
PM_HIDDEN int pm_view_end(pm_view_t *v, const char **why);

/* ---- setup.c: libhpc's state for a communicator -------------------- */
/* Set comm up (hpc_coll_setup) unless it is, at a point every rank of comm
 * reaches alike (made_now: where it was made, else its first call); 1:
 * libhpc may serve calls on comm, 0: not (inside libhpc, an
 * intercommunicator, MPI_COMM_NULL, or one MPI refused the set-up of),
 * -1: set-up failed (said, and comm's error handler called; *err: its
 * code). */
PM_HIDDEN int pm_ready(MPI_Comm comm, int *err, int made_now);
/* Communicators made by MPI_Comm_idup whose state waits to be attached
 * (setup.c): how many; after a completion call, the requests it was
 * given (before) against what it left (after) - each idup request it
 * completed attaches its state; a freed idup request forgets its state. */
extern PM_HIDDEN int pm_nidup;
PM_HIDDEN void pm_idup_check(int n, const MPI_Request *before, const MPI_Request *after);
PM_HIDDEN void pm_idup_forget(MPI_Request r);

#endif
