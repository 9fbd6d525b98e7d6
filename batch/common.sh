# shellcheck shell=bash
# common.sh - shared by the Slurm scripts in batch/: where the programs
# are, how ranks are started (srun inside an allocation, mpiexec on local
# cores outside one), the run folder, and stopping and requeueing before
# the time limit.  Sourced, not run.
#
# make fills in the two defaults below for the build tree (BUILD/batch/)
# and for `make install` (PREFIX/share/hpckit/batch/); the copies in the
# source tree find the programs in _build/mpich of the folder the job was
# submitted from, or on PATH.
#
#   HPC_BIN        folder with the programs (an install's bin/ or a build
#                  tree); default: filled in by make, else as above
#   HPC_SRUN_MPI   srun --mpi plugin; default: pmi2 for MPICH, pmix for
#                  Open MPI (the MPI the programs were built with)
#   HPC_NP         ranks outside Slurm (default: the cores of this machine);
#                  bound one to a core when they fit the cores, else unbound
#   HPC_PROGRESS   seconds between the programs' progress lines in the log
#                  (default here: 60 in a Slurm job, 10 outside; 0: none)
#   RUN_DIR        the run folder (default: runs/JOBNAME-JOBID of the
#                  submit folder)
#   HPC_MAX_REQUEUE  requeues allowed (default 20); 3 in a row without
#                  progress also stop it
hpc_bin_default=
hpc_mpi_default=

hpc_top=${SLURM_SUBMIT_DIR:-$(pwd)}

# the programs' progress lines: a job's log is read now and then, a local
# run's output is watched (unless the user chose)
if [ -z "${HPC_PROGRESS:-}" ]; then
    if [ -n "${SLURM_JOB_ID:-}" ]; then HPC_PROGRESS=60; else HPC_PROGRESS=10; fi
fi
export HPC_PROGRESS

# hpc_prog NAME: the path of hpc-NAME
hpc_prog() {
    local dir
    for dir in "${HPC_BIN:-}" "$hpc_bin_default" "$hpc_top/_build/mpich"; do
        [ -n "$dir" ] || continue
        [ -x "$dir/hpc-$1" ] && { echo "$dir/hpc-$1"; return; }
        [ -x "$dir/apps/$1/hpc-$1" ] && { echo "$dir/apps/$1/hpc-$1"; return; }
    done
    command -v "hpc-$1" 2>/dev/null && return
    echo "batch: hpc-$1 not found: set HPC_BIN to an install's bin/ or a build folder" >&2
    return 1
}

# Without the right --mpi plugin srun starts N independent singletons, each
# rank 0 of 1 (hpc-info warns "launcher and MPI disagree").
hpc_srun_mpi() {
    if [ -n "${HPC_SRUN_MPI:-}" ]; then echo "$HPC_SRUN_MPI"; return; fi
    case $hpc_mpi_default in
    mpich) echo pmi2; return ;;
    openmpi) echo pmix; return ;;
    esac
    p=$(hpc_prog info) || return 1
    # in a build tree the program is a libtool wrapper; the binary is in .libs
    [ -x "$(dirname "$p")/.libs/$(basename "$p")" ] && p=$(dirname "$p")/.libs/$(basename "$p")
    if ldd "$p" 2>/dev/null | grep -q 'libmpi\.so'; then echo pmix; else echo pmi2; fi
}

# hpc_option NAME SHORT ARGS...: the value the program's option --NAME (or
# -SHORT) has in ARGS, as the program reads it: the last one wins
hpc_option() {
    _name=$1 _short=$2 _val=
    shift 2
    while [ $# -gt 0 ]; do
        case $1 in
        "--$_name"|"-$_short") _val=${2:-}; shift ;;
        "--$_name="*) _val=${1#--"$_name"=} ;;
        esac
        shift
    done
    echo "$_val"
}

# hpc_cores: the cores this script may use (hardware threads of a core
# count once)
hpc_cores() {
    n=$(nproc 2>/dev/null || echo 2)
    tpc=$(lscpu 2>/dev/null | awk -F: '/^Thread\(s\) per core/ { print $2 + 0 }')
    [ -n "$tpc" ] && [ "$tpc" -gt 1 ] && [ $((n / tpc)) -ge 1 ] && n=$((n / tpc))
    echo "$n"
}

# hpc_launcher: the command line that starts ranks here.  Inside Slurm,
# srun (--kill-on-bad-exit: a rank that dies ends the step; Slurm's
# default leaves the others waiting for it forever); outside, hpc-mpiexec
# (the launcher of the programs' MPI, installed beside them) on HPC_NP or
# all local cores, each rank bound to a core when they fit (unbound ranks
# wander and share cores: hpc-info warns), unbound when there are more
# ranks than cores.
hpc_launcher() {
    if [ -n "${SLURM_JOB_ID:-}" ]; then
        echo "srun --kill-on-bad-exit=1 --mpi=$(hpc_srun_mpi)"
        return
    fi
    cores=$(hpc_cores)
    np=${HPC_NP:-$cores}
    if [ "$(hpc_srun_mpi)" = pmix ]; then
        mpiexec=$(hpc_prog mpiexec 2>/dev/null) || mpiexec="mpiexec.openmpi --oversubscribe"
        bind="--bind-to none"
        [ "$np" -le "$cores" ] 2>/dev/null && bind="--bind-to core"
    else
        mpiexec=$(hpc_prog mpiexec 2>/dev/null) || mpiexec=mpiexec.mpich
        bind=
        [ "$np" -le "$cores" ] 2>/dev/null && bind="-bind-to core"
    fi
    echo "$mpiexec $bind -n $np"
}

# hpc_srun NAME ARGS...: run hpc-NAME on every rank
hpc_srun() {
    prog=$(hpc_prog "$1") || return 1
    shift
    $(hpc_launcher) "$prog" "$@"
}

# hpc_run_dir NAME ARGS...: make the run folder, print where it is, and
# record the resolved command line and (once) where the ranks run
hpc_run_dir() {
    RUN_DIR=${RUN_DIR:-$hpc_top/runs/${SLURM_JOB_NAME:-hpc-$1}-${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-local$$}}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}}
    mkdir -p "$RUN_DIR" || { echo "batch: cannot make run folder $RUN_DIR" >&2; return 1; }
    export RUN_DIR
    echo "== run folder: $RUN_DIR"
    prog=$(hpc_prog "$1") || return 1
    shift
    echo "$(hpc_launcher) $prog $*" >> "$RUN_DIR/command.txt"
    if [ ! -e "$RUN_DIR/placement.txt" ]; then
        # a failed placement step (a node not ready) is shown, not kept:
        # placement.txt then says where a later run (a requeue) placed ranks
        pl=$RUN_DIR/placement.txt
        if info=$(hpc_prog info) && $(hpc_launcher) "$info" > "$pl.tmp" 2>&1; then
            mv "$pl.tmp" "$pl" && cat "$pl"
        else
            cat "$pl.tmp" 2>/dev/null
            rm -f "$pl.tmp"
            echo "== the placement step failed; going on (a later run records the placement)"
        fi
    fi
    return 0
}

# hpc_srun_stoppable NAME ARGS...: hpc_srun in the background, with SIGUSR1
# and SIGTERM to this script (Slurm's warning before the time limit,
# scancel --signal) passed on to every task; the program stops at a step
# boundary and exits 75 when it left a resumable state.  Returns its exit
# status; hpc_stopped is 1 if a signal came.
hpc_stopped=0
hpc_srun_stoppable() {
    # exec: $! is srun (or mpiexec) itself, which passes the signal on
    ( prog=$(hpc_prog "$1") || exit 127; shift
      exec $(hpc_launcher) "$prog" "$@" ) &
    hpc_pid=$!
    trap 'hpc_stopped=1; echo "== signal: asking hpc-'"$1"' to stop at its next step"; kill -USR1 $hpc_pid 2>/dev/null' USR1 TERM
    while :; do
        wait "$hpc_pid"
        hpc_rc=$?
        # a trap interrupts wait with status > 128 while srun still runs
        kill -0 "$hpc_pid" 2>/dev/null || break
    done
    trap - USR1 TERM
    return "$hpc_rc"
}

# hpc_requeue_if_stopped RC STATE [COMMAND...]: after a stop with a
# resumable state (RC 75), requeue this job - unless it has been requeued
# HPC_MAX_REQUEUE times, or its STATE (a file whose size and time show
# progress: a .partial, a checkpoint) has not changed in the last 3 runs.
# Prints why it stops.  Outside Slurm nothing requeues: it prints COMMAND,
# the exact command that continues (quoted for the shell), or where none
# is given, that the same command continues.
hpc_requeue_if_stopped() {
    [ "$hpc_stopped" = 1 ] && [ "$1" = 75 ] || return 0
    if [ -z "${SLURM_JOB_ID:-}" ]; then
        if [ $# -gt 2 ]; then
            shift 2
            echo "== stopped; continue with: $(printf '%q ' "$@" | sed 's/ $//')"
        else
            echo "== stopped; run the same command again to continue"
        fi
        return 0
    fi
    restarts=${SLURM_RESTART_COUNT:-0}
    if [ "$restarts" -ge "${HPC_MAX_REQUEUE:-20}" ]; then
        echo "== not requeueing: already requeued $restarts times (HPC_MAX_REQUEUE)"
        return 0
    fi
    mark=$(stat -c '%s %Y' "$2" 2>/dev/null || echo none)
    log=${RUN_DIR:-$hpc_top}/.requeue-progress
    echo "$mark" >> "$log"
    if [ "$(tail -n 3 "$log" | sort -u | wc -l)" = 1 ] && [ "$(wc -l < "$log")" -ge 3 ]; then
        echo "== not requeueing: no progress in the last 3 runs ($2 unchanged)"
        return 0
    fi
    echo "== requeueing job $SLURM_JOB_ID; the next run resumes from $2"
    scontrol requeue "$SLURM_JOB_ID"
}

# The scripts of the source tree, run as `sbatch batch/NAME.sh` from its
# top, find this file through SLURM_SUBMIT_DIR; installed and build-tree
# copies have its folder filled in.
