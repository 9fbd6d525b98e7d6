#!/bin/sh
# programs_env.sh - every program, started the way users start them by
# mistake: with launcher variables left over in the shell (RANK/WORLD_SIZE
# after torchrun, SLURM_* outside the job, another MPI's variables) that
# contradict each other - once a SIGSEGV in every program - and with a bad
# HPC_* setting or a bad flag, which every program must answer alike: one
# line naming itself and the problem, exit 2.
B=${top_builddir:-.}
T=$(mktemp -d "${TMPDIR:-/tmp}/programs_env.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" "$T/err" 2>/dev/null; exit 1; }

# each program with a quick, real piece of work
cmd() {
    case $1 in
    hpc-info) echo "$B/apps/info/hpc-info" ;;
    hpc-odegen) echo "$B/apps/odegen/hpc-odegen -q -n 4 --force --out $T/o.h5" ;;
    hpc-collbench) echo "$B/apps/collbench/hpc-collbench -b 8 -e 8 -w 0 -n 1" ;;
    hpc-matmul) echo "$B/apps/matmul/hpc-matmul -q --gen 8,8,8 --verify" ;;
    hpc-h5check) echo "$B/apps/h5check/hpc-h5check -q $T/d.h5" ;;
    hpc-train) echo "$B/apps/train/hpc-train -q --data $T/d.h5 --out $T/run --force --steps 2 --batch 8" ;;
    esac
}
PROGRAMS="hpc-info hpc-odegen hpc-collbench hpc-matmul hpc-train hpc-h5check"
# hpc-train's data: a few trajectories
"$B/apps/odegen/hpc-odegen" -q -n 4 --nt 5 --out "$T/d.h5" || fail "making hpc-train's data"

stale="RANK=1,WORLD_SIZE=1 SLURM_PROCID=4,SLURM_NTASKS=2 LOCAL_RANK=3,LOCAL_WORLD_SIZE=2,RANK=0,WORLD_SIZE=1"
# a singleton must not take another MPI's variables for its own runtime's
if [ "$HPC_MPI_FLAVOR" = openmpi ]; then
    stale="$stale PMI_RANK=5,PMI_SIZE=2,MPI_LOCALRANKID=0"
else
    stale="$stale OMPI_COMM_WORLD_RANK=3,OMPI_COMM_WORLD_SIZE=2"
fi

for p in $PROGRAMS; do
    for vars in $stale; do
        set -- $(echo "$vars" | tr ',' ' ')
        # a singleton: the variables are all it has; it warns once and runs
        env "$@" timeout 120 $(cmd $p) > "$T/out" 2> "$T/err"
        rc=$?
        [ $rc = 0 ] || fail "$p with $vars: exit $rc"
        [ "$(grep -c . "$T/err")" = 1 ] && grep -q 'warning: ignoring the launcher variables' "$T/err" ||
            fail "$p with $vars: not one warning line"
        # under the launcher, whose own variables take precedence
        env "$@" $MPIEXEC_WRAP -n 2 $(cmd $p) > "$T/out" 2> "$T/err" || fail "$p with $vars on 2 ranks"
        [ "$(grep -c . "$T/err")" -le 1 ] || fail "$p with $vars on 2 ranks: more than one line"
    done
    echo "ok: $p with stale launcher variables"

    # one answer for everyone: bad HPC_* setting, bad flag
    HPC_LOG=loud $MPIEXEC_WRAP -n 2 $(cmd $p) > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 2 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q "^$p: HPC_LOG='loud'" "$T/err" ||
        fail "$p with HPC_LOG=loud: exit $rc"
    HPC_GPU_BIND=sideways $MPIEXEC_WRAP -n 2 $(cmd $p) > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 2 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q "^$p: HPC_GPU_BIND='sideways'" "$T/err" ||
        fail "$p with HPC_GPU_BIND=sideways: exit $rc"
    $MPIEXEC_WRAP -n 2 $(cmd $p) --bogus > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc = 2 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -q "^$p: unknown option '--bogus'" "$T/err" ||
        fail "$p --bogus: exit $rc"
    $MPIEXEC_WRAP -n 1 $(cmd $p) --help > "$T/out" 2> "$T/err" && grep -q "^Usage: $p" "$T/out" ||
        fail "$p --help"
    echo "ok: $p: bad setting, bad flag -> one line, exit 2; --help"
done
echo "programs_env: every program answers alike"
