/* h5_internal.h - shared by the files of the HDF5 layer (h5*.c). */
#ifndef HPC_H5_INTERNAL_H
#define HPC_H5_INTERNAL_H

#include "hpc_h5.h"

struct hpc_h5file {
    hid_t id;
    MPI_Comm comm;
    int rank;
    int writing;          /* PATH.partial being written: rename on finish */
    int serial;           /* opened with the serial (sec2) driver, not MPI-IO */
    int lockfd;           /* rank 0's hold on PATH.lock, -1 = none */
    int datafd;           /* for hpc_h5_sync_data, opened on first use */
    int reserved;         /* disk reserved beyond the end: trimmed on finish */
    int setup;            /* open as PATH.setup until hpc_h5_setup_done */
    char *path;           /* final name */
    char *open_path;      /* the name actually open (.partial or not) */
    char *lock_path;
};

/* First statement of every public function that calls HDF5. */
#define QUIET HPC_H5_QUIET

/* h5.c: 1 if obj's file is open with the serial driver (a collective
 * transfer on it is made independent) */
int h5_serial_file_of(hid_t obj);

#endif
