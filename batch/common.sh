# common.sh - shared by the Slurm scripts in batch/: where the hpckit
# programs are and how srun starts MPI ranks.  Sourced, not run.
#
#   HPC_BIN        folder with the programs: an install's bin/, or a build
#                  tree (default: _build/mpich of the submit folder if built
#                  there, else PATH)
#   HPC_SRUN_MPI   srun --mpi plugin (default: pmi2 for MPICH, pmix for
#                  Open MPI, from the library hpc-info is linked to)

hpc_top=${SLURM_SUBMIT_DIR:-$(pwd)}

# hpc_prog NAME: the path of hpc-NAME
hpc_prog() {
    for d in "${HPC_BIN:-}" "$hpc_top/_build/mpich"; do
        [ -n "$d" ] || continue
        [ -x "$d/hpc-$1" ] && { echo "$d/hpc-$1"; return; }
        [ -x "$d/apps/$1/hpc-$1" ] && { echo "$d/apps/$1/hpc-$1"; return; }
    done
    command -v "hpc-$1" 2>/dev/null && return
    echo "batch: hpc-$1 not found: set HPC_BIN to an install's bin/ or a build folder" >&2
    return 1
}

# Without the right --mpi plugin srun starts N independent singletons, each
# rank 0 of 1 (hpc-info warns "launcher and MPI disagree").
hpc_srun_mpi() {
    if [ -n "${HPC_SRUN_MPI:-}" ]; then echo "$HPC_SRUN_MPI"; return; fi
    p=$(hpc_prog info) || return 1
    # in a build tree the program is a libtool wrapper; the binary is in .libs
    [ -x "$(dirname "$p")/.libs/$(basename "$p")" ] && p=$(dirname "$p")/.libs/$(basename "$p")
    if ldd "$p" 2>/dev/null | grep -q 'libmpi\.so'; then echo pmix; else echo pmi2; fi
}

# hpc_srun NAME ARGS...: run hpc-NAME on every task of the allocation.
# --kill-on-bad-exit: a rank that dies ends the step (Slurm's default
# leaves the others waiting for it forever).
hpc_srun() {
    prog=$(hpc_prog "$1") || return 1
    shift
    srun --kill-on-bad-exit=1 --mpi="$(hpc_srun_mpi)" "$prog" "$@"
}

# hpc_srun_stoppable NAME ARGS...: hpc_srun in the background, with SIGUSR1
# and SIGTERM to this script (Slurm's warning before the time limit,
# scancel --signal) passed on to every task; the program stops at a step
# boundary and exits 75 when it left a resumable state.  Returns its exit
# status; hpc_stopped is 1 if a signal came.
hpc_stopped=0
hpc_srun_stoppable() {
    # exec: $! is srun itself, which forwards the signal to the tasks
    ( prog=$(hpc_prog "$1") || exit 127; shift
      exec srun --kill-on-bad-exit=1 --mpi="$(hpc_srun_mpi)" "$prog" "$@" ) &
    hpc_pid=$!
    trap 'hpc_stopped=1; echo "== signal: asking hpc-'"$1"' to stop at its next step"; kill -USR1 $hpc_pid 2>/dev/null' USR1 TERM
    while :; do
        wait "$hpc_pid"
        hpc_rc=$?
        # a trap interrupts wait with status > 128 while srun still runs
        kill -0 "$hpc_pid" 2>/dev/null || break
    done
    trap - USR1 TERM
    return $hpc_rc
}
