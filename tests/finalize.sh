#!/bin/sh
# finalize.sh - both ends of MPI on one node, at 2 ranks: MPI_Finalize
# (HPC_FINALIZE=mpi, and auto, which is MPI_Finalize on one node) and the
# quiet end (HPC_FINALIZE=quiet: what hpc_finalize does where MPICH's
# MPI_Finalize hangs across nodes).  Whichever end, an HDF5 file the
# program left open is complete and readable, a stdio file it never
# flushed has its line, and the exit status is the program's own.  The
# quiet end leaves MPI to the process's exit (MPI_Finalized says 0); the
# multi-node loop that shows it avoids the hang is in tests/cluster/.
# Open MPI's launcher takes a rank that exits without MPI_Finalize for a
# failure, and auto never ends it quietly: quiet is tested under MPICH.
. "$top_srcdir/tests/testlib.sh" finalize
prog=$top_builddir/tests/finalize_prog
[ -n "$H5DUMP" ] || { echo "SKIP: no h5dump"; exit 77; }

run() {   # run MODE: 2 ranks, HPC_FINALIZE=MODE; checks what is left
    rm -f "$T/x.h5" "$T/t.txt"
    HPC_FINALIZE=$1 HPC_LOG=debug "$MPIEXEC_WRAP" -n 2 "$prog" "$T/x.h5" "$T/t.txt" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 3 ] || { cat "$T/out" "$T/err"; fail "HPC_FINALIZE=$1: exit $rc, expected the program's 3"; }
    "$H5DUMP" -d x -s 1999 -c 1 "$T/x.h5" > "$T/dump" 2>&1 || { cat "$T/dump"; fail "HPC_FINALIZE=$1: the open HDF5 file is not readable"; }
    grep -q '(1999): 1999' "$T/dump" || { cat "$T/dump"; fail "HPC_FINALIZE=$1: rank 1's last value is not in the file"; }
    grep -qx 'the last line' "$T/t.txt" || fail "HPC_FINALIZE=$1: the unflushed stdio line is lost"
    skipped=$(grep -c 'MPI_Finalize skipped' "$T/err")
}

run mpi
[ "$skipped" = 0 ] || fail "HPC_FINALIZE=mpi skipped MPI_Finalize"
grep -qx 'MPI_Finalized 1' "$T/out" || fail "HPC_FINALIZE=mpi: MPI_Finalized is not 1 after hpc_finalize"
run auto
[ "$skipped" = 0 ] || fail "HPC_FINALIZE=auto skipped MPI_Finalize on one node"
echo "MPI_Finalize: files complete, status kept"
if [ "$HPC_MPI_FLAVOR" = mpich ]; then
    run quiet
    [ "$skipped" = 2 ] || { cat "$T/err"; fail "HPC_FINALIZE=quiet: $skipped ranks said they skipped MPI_Finalize, expected 2"; }
    grep -qx 'MPI_Finalized 0' "$T/out" || fail "the quiet end: MPI_Finalized is not 0"
    echo "the quiet end: files complete, status kept"
fi
