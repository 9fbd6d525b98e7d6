#!/bin/sh
# launcher.sh - how users start hpckit's programs (issue 28.2):
#   - hpc-mpiexec, made by make from the launcher configure found, runs
#     ranks that MPI sees as one job (no "disagree" warning), and says
#     which launcher it runs (--which);
#   - hpc-info names it ("start:" line, and in --json);
#   - the wrong launcher - the other MPI's mpiexec (on Debian, plain
#     `mpiexec` is Open MPI's) - starts N singletons: every program refuses
#     on each of them with the same one line naming hpc-mpiexec, exit 2,
#     instead of N copies of the whole job writing the same files.
. "$top_srcdir/tests/testlib.sh" launcher
B=$top_builddir
hm=$B/apps/mpiexec/hpc-mpiexec
[ -x "$hm" ] || fail "$hm not made"

step "hpc-mpiexec --which, --help"
[ "$("$hm" --which)" = "$MPIEXEC" ] || fail "hpc-mpiexec --which says '$("$hm" --which)', configure found '$MPIEXEC'"
"$hm" --help > "$T/help" || fail "hpc-mpiexec --help"
grep -q "^  hpc-mpiexec -n 4 hpc-train" "$T/help" || { cat "$T/help"; fail "hpc-mpiexec --help has no example"; }

step "hpc-mpiexec -n 3 hpc-info: one job of 3 ranks"
timeout 120 "$hm" -n 3 "$B/apps/info/hpc-info" > "$T/out" 2> "$T/err" || { cat "$T/out" "$T/err"; fail "hpc-mpiexec -n 3 hpc-info"; }
[ "$(grep -c -E '^ +[0-9]+  ' "$T/out")" = 3 ] || { cat "$T/out"; fail "not 3 rows"; }
grep -q disagree "$T/out" "$T/err" && { cat "$T/out" "$T/err"; fail "launcher and MPI disagree under hpc-mpiexec"; }
grep -qx "start:     hpc-mpiexec -n N (runs $MPIEXEC), srun --mpi=pmi[x2] under Slurm" "$T/out" ||
    { cat "$T/out"; fail "hpc-info does not name hpc-mpiexec and $MPIEXEC"; }
timeout 60 "$hm" -n 1 "$B/apps/info/hpc-info" --json > "$T/out" || fail "hpc-info --json"
grep -q "\"start\": {\"mpiexec\": \"hpc-mpiexec\", \"runs\": \"$MPIEXEC\"" "$T/out" || { cat "$T/out"; fail "--json has no start"; }

# the other MPI's launcher
if [ "$HPC_MPI_FLAVOR" = openmpi ]; then
    other=$(command -v mpiexec.mpich || true); flavor=MPICH; me="Open MPI"
else
    other=$(command -v mpiexec.openmpi || true); flavor=Open; me=MPICH
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi
if [ -z "$other" ]; then
    echo "(the other MPI's launcher is not installed: the singleton case is not tested)"
    echo "launcher.sh: all checks passed"
    exit 0
fi
. "$top_srcdir/tests/programs_lib.sh"
"$B/apps/odegen/hpc-odegen" -q -n 4 --nt 5 --out "$T/d.h5" || fail "hpc-train's data"
for p in $PROGRAMS; do
    step "$p under $other -n 2: refused on each singleton"
    timeout 120 "$other" -n 2 $(cmd $p) > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 2 ] || { cat "$T/out" "$T/err"; fail "$p: exit $rc, want 2"; }
    grep "^$p: " "$T/err" > "$T/lines"
    [ "$(wc -l < "$T/lines")" = 2 ] && [ "$(sort -u "$T/lines" | wc -l)" = 1 ] ||
        { cat "$T/err"; fail "$p: not the same line from each of the 2 singletons"; }
    grep -q "^$p: started as 2 singletons (rank 0 of 1 each) by $flavor.*, but built with $me: start it with hpc-mpiexec -n 2 ($me's $MPIEXEC)" "$T/lines" ||
        { cat "$T/err"; fail "$p: the line does not name hpc-mpiexec"; }
    grep -v "^$p: " "$T/err" | grep -q -i "warning" && { cat "$T/err"; fail "$p: a warning besides the line"; }
    [ ! -e "$T/run" ] || fail "$p: a run folder was made"
    [ -s "$T/out" ] && { cat "$T/out"; fail "$p: wrote to stdout"; }
    [ ! -e "$T/o.h5" ] || fail "$p: hpc-odegen wrote its file"
done
echo "launcher.sh: all checks passed"
