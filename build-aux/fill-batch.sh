#!/bin/sh
# fill-batch.sh SRC DST BATCH-DIR BIN-DIR MPI-FLAVOR - a copy of a batch/
# script with its folder, the programs' folder and the MPI filled in, so
# that it works from any submission folder (Slurm runs a copy of the
# script from its spool, where $0 tells nothing).
set -e
sed -e 's|^HPC_BATCH_DIR=\${HPC_BATCH_DIR:-}$|HPC_BATCH_DIR=${HPC_BATCH_DIR:-'"$3"'}|' \
    -e 's|^hpc_bin_default=$|hpc_bin_default='"$4"'|' \
    -e 's|^hpc_mpi_default=$|hpc_mpi_default='"$5"'|' "$1" > "$2.tmp"
chmod +x "$2.tmp"
mv "$2.tmp" "$2"
