#!/bin/sh
# pmpi.sh - libhpc-mpi.so under an unmodified MPI program (see pmpi.mk).
lib=$top_builddir/libhpc/mpi/.libs/libhpc-mpi.so
prog=$top_builddir/tests/pmpi_known
tmp=${TMPDIR:-/tmp}/hpc_pmpi.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$tmp/out"; exit 1; }
[ -f "$lib" ] || fail "no $lib"
# the uninstalled libhpc.so it needs
export LD_LIBRARY_PATH=$top_builddir/libhpc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# without the drop-in: the test itself is right
$MPIEXEC_WRAP -n 3 "$prog" >"$tmp/out" 2>&1 || fail "pmpi_known without libhpc-mpi.so"

# (HPC_MPI_SMALL=0: libhpc serves the small calls too, which on one node
# it would give to MPI's own collective; the default's run follows)
for np in 1 2 3 5 7; do   # (4: the odd-even run below)
    LD_PRELOAD=$lib HPC_MPI_SMALL=0 HPC_MPI_VERBOSE=1 HPC_TIMEOUT=60 $MPIEXEC_WRAP -n $np "$prog" >"$tmp/out" 2>&1 \
        || fail "pmpi_known under libhpc-mpi.so at $np ranks"
    line=$(grep '^hpc-mpi: hpckit served' "$tmp/out") || fail "$np ranks: no HPC_MPI_VERBOSE line"
    served=$(echo "$line" | sed 's/.*served \([0-9]*\) .*/\1/')
    fell=$(echo "$line" | sed 's/.*, \([0-9]*\) fell.*/\1/')
    [ "$served" -gt 1000 ] || fail "$np ranks: only $served calls served"
    [ "$fell" -gt 0 ] || fail "$np ranks: nothing fell through (unsigned, MPI_BAND, odd byte counts must)"
    echo "ok: $np ranks: $line"
done
# the default: small calls that libhpc would run as a flat schedule, and
# small nonblocking ones, given to MPI's own on one node; the rest served
LD_PRELOAD=$lib HPC_MPI_VERBOSE=1 HPC_TIMEOUT=60 $MPIEXEC_WRAP -n 3 "$prog" >"$tmp/out" 2>&1 \
    || fail "pmpi_known under libhpc-mpi.so at 3 ranks, HPC_MPI_SMALL's default"
line=$(grep '^hpc-mpi: hpckit served' "$tmp/out") || fail "HPC_MPI_SMALL's default: no HPC_MPI_VERBOSE line"
echo "$line" | grep -Eq 'served [1-9][0-9]* collective calls, gave [1-9][0-9]* to MPI' ||
    fail "HPC_MPI_SMALL's default: not some served and some given to MPI: $line"
echo "ok: 3 ranks, HPC_MPI_SMALL's default: $line"
# hierarchical algorithms under it: two fake nodes
LD_PRELOAD=$lib HPC_NODE_SPLIT=odd-even HPC_TIMEOUT=60 $MPIEXEC_WRAP -n 4 "$prog" >"$tmp/out" 2>&1 \
    || fail "pmpi_known under libhpc-mpi.so, HPC_NODE_SPLIT=odd-even"
echo "ok: 4 ranks, odd-even"

# mpi4py, where installed for the MPI this build uses (Debian's is Open MPI's)
py4=
for c in ${PYTHON_SCI:-python3} python3 /usr/bin/python3; do
    if $c -c 'import mpi4py.MPI, numpy' 2>/dev/null; then py4=$c; break; fi
done
mpilib=$([ -n "$py4" ] && $py4 -c 'import mpi4py.MPI as M; print(M.Get_library_version())' 2>/dev/null)
case "$HPC_MPI_FLAVOR:$mpilib" in
openmpi:*"Open MPI"*|mpich:*MPICH*)
    LD_PRELOAD=$lib HPC_MPI_VERBOSE=1 $MPIEXEC_WRAP -n 3 $py4 "$top_srcdir/tests/pmpi_mpi4py.py" >"$tmp/out" 2>&1 \
        || fail "mpi4py under libhpc-mpi.so"
    grep -q '^hpc-mpi: hpckit served [1-9]' "$tmp/out" || fail "mpi4py: nothing served"
    echo "ok: mpi4py: $(grep '^hpc-mpi' "$tmp/out")" ;;
*)
    echo "skip: no mpi4py for this build's MPI ($HPC_MPI_FLAVOR)" ;;
esac

# communicators made by MPI_Comm_idup, their first calls started in
# another order on odd ranks: no hidden collective may order them (once:
# each rank waited in another communicator's set-up, for ever)
probe=$top_builddir/tests/pmpi_probe
for np in 2 3 4; do
    LD_PRELOAD=$lib HPC_MPI_VERBOSE=1 HPC_TIMEOUT=20 HPC_TEST_TIMEOUT=60 $MPIEXEC_WRAP -n $np "$probe" idup \
        >"$tmp/out" 2>&1 || fail "pmpi_probe idup under libhpc-mpi.so at $np ranks: exit $?"
    grep -q "pmpi_probe idup: $np ranks, 0 failures" "$tmp/out" || fail "pmpi_probe idup at $np ranks: no result"
    grep '^hpc-mpi: hpckit served' "$tmp/out" | grep -Eq ' allreduce [1-9][0-9]*/[0-9]+/0[ )]' ||
        fail "pmpi_probe idup at $np ranks: the allreduces on idup'ed communicators were not served"
    echo "ok: MPI_Comm_idup, first calls in another order, $np ranks"
done

# a window of 20 nonblocking calls served by libhpc (ring forced) and
# completed by MPI_Testany: each completion call advances them once
# (once: each advanced each time any was tested, 14 passes a call here)
LD_PRELOAD=$lib HPC_COLL_ALLREDUCE=ring HPC_MPI_VERBOSE=1 HPC_TIMEOUT=20 HPC_TEST_TIMEOUT=60 \
    $MPIEXEC_WRAP -n 3 "$probe" window >"$tmp/out" 2>&1 || fail "pmpi_probe window under libhpc-mpi.so: exit $?"
grep -q "pmpi_probe window: 3 ranks, 0 failures" "$tmp/out" || fail "pmpi_probe window: no result"
line=$(grep '^hpc-mpi: hpckit served' "$tmp/out")
passes=$(echo "$line" | sed -n 's/.*; \([0-9]*\) passes over its calls in flight at \([0-9]*\) points.*/\1/p')
points=$(echo "$line" | sed -n 's/.*; \([0-9]*\) passes over its calls in flight at \([0-9]*\) points.*/\2/p')
[ -n "$passes" ] && [ -n "$points" ] && [ "$points" -gt 0 ] && [ "$passes" -le $((2 * points)) ] ||
    fail "pmpi_probe window: $passes passes over the calls in flight at $points points"
echo "ok: a window of 20 nonblocking calls: $passes passes at $points points"

# as many communicators as MPI gives: under the drop-in each costs MPI
# one context id more, not three more (MPICH: 510 of 2046 once), and
# running out is one line naming the cause, not an abort
$MPIEXEC_WRAP -n 2 "$probe" comms >"$tmp/out" 2>&1 || fail "pmpi_probe comms without the drop-in"
plain=$(sed -n 's/^comms //p' "$tmp/out")
LD_PRELOAD=$lib HPC_TEST_TIMEOUT=120 $MPIEXEC_WRAP -n 2 "$probe" comms >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err" >>"$tmp/out"; fail "pmpi_probe comms under libhpc-mpi.so: exit $?"; }
served=$(sed -n 's/^comms //p' "$tmp/out")
[ -n "$plain" ] && [ -n "$served" ] && [ $((2 * served)) -ge $((plain - 8)) ] ||
    { cat "$tmp/err" >>"$tmp/out"; fail "communicators: $served under the drop-in, $plain without"; }
[ "$(grep -c . "$tmp/err")" -le 1 ] || { cat "$tmp/err" >>"$tmp/out"; fail "running out of communicators: more than one line"; }
[ "$served" -ge 4096 ] || grep -q "context id" "$tmp/err" || { cat "$tmp/err" >>"$tmp/out"; fail "running out: no line naming the cause"; }
echo "ok: communicators: $served under the drop-in, $plain without${served:+; $(head -c 300 "$tmp/err")}"

# HPC_TIMEOUT covers the start-up under the drop-in too: the second rank
# stops itself before it starts MPI (the launcher's MPMD form), the
# first waits inside MPI_Init (once: for ever)
HPC_TIMEOUT=2 HPC_TEST_TIMEOUT=40 LD_PRELOAD=$lib $MPIEXEC_WRAP -n 1 "$prog" : -n 1 sh -c 'kill -STOP $$' \
    >"$tmp/out" 2>&1
st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && [ $st -ne 137 ] || fail "a rank lost before MPI_Init: exit $st"
grep -q 'watchdog (HPC_TIMEOUT=2 s): the start-up (MPI_Init) not finished' "$tmp/out" ||
    fail "a rank lost before MPI_Init: no watchdog line"
echo "ok: a rank lost before MPI_Init: $(grep -m1 watchdog "$tmp/out")"
