# lib.sh - what the multi-node tests share (sourced by tests/cluster_box.sh
# and by each case it runs): one cluster in a box (cluster.sh) per test
# run, started once, the cases run against it, stopped at the end.
#
#   box_start NODES    start it (skips the test, 77, where it cannot run),
#                      export SLURM_CONF; the cluster's id: $BOX_ID
#   box_stop           stop it; fails if anything is left behind
#   box CMD ARGS...    cluster.sh CMD -i $BOX_ID ARGS... (kill n2, cut n2, ...)
#   brun SECS SRUN-ARGS... -- PROG ARGS...
#                      srun with the build's --mpi plugin, ended after SECS
#   slurm_wait JOB SECS  wait for a batch job; true if it completed with 0
#                      (tests/slurm/cluster.sh)
#   bprog NAME         the build's hpc-NAME (absolute: jobs run elsewhere)
#   node_healthy       every node idle again (a case that broke one revives it)
#                      and a step runs on all of them
#   rank_hosts FILE    the host of each rank in hpc-info's table in FILE,
#                      one a line, in rank order
top_srcdir=$(cd "${top_srcdir:-.}" && pwd)   # the cases run in folders of their own
# run with bash: a distribution tarball may not keep its execute bit
CLUSTER_SH=$top_srcdir/tests/cluster/cluster.sh
top_builddir=$(cd "${top_builddir:-.}" && pwd)
case $HPC_MPI_FLAVOR in
openmpi) BOX_MPI=pmix ;;
*) BOX_MPI=pmi2 ;;
esac
# Open MPI as root, without the ptrace rights CMA needs (as mpiexec-wrap)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# every node's ranks share this machine's cores with the other nodes'
export HPC_COLL_YIELD=1

. "$top_srcdir/tests/slurm/cluster.sh"   # slurm_wait

box() { _cmd=$1; shift; bash "$CLUSTER_SH" "$_cmd" -i "$BOX_ID" "$@"; }

box_start() {
    # an id of its own: MPICH's and Open MPI's builds may test at once
    BOX_ID=
    case $HPC_MPI_FLAVOR in openmpi) ids="2 4 6 8" ;; *) ids="1 3 5 7 9" ;; esac
    for i in $ids; do
        [ -e "/tmp/hpckit-cluster$i" ] || ip link show "hpck$i" > /dev/null 2>&1 || { BOX_ID=$i; break; }
    done
    [ -n "$BOX_ID" ] || { echo "SKIP: every cluster id of this MPI ($ids) is in use here"; exit 77; }
    out=$(bash "$CLUSTER_SH" start -i "$BOX_ID" -n "$1" ${2:+--mem "$2"} 2>&1)
    rc=$?
    [ $rc = 77 ] && { echo "SKIP: ${out#cluster.sh: }"; exit 77; }
    echo "$out"
    [ $rc = 0 ] || fail "cluster.sh start: $out"
    export SLURM_CONF=/tmp/hpckit-cluster$BOX_ID/slurm.conf
    BOX_DIR=/tmp/hpckit-cluster$BOX_ID
    # testlib.sh's fail shows their ends (the folder is gone after the test)
    FAIL_SHOW="${FAIL_SHOW:-} $BOX_DIR/log/slurmctld.log $BOX_DIR/log/slurmd.*.log"
}

box_stop() {
    [ -n "${BOX_ID:-}" ] || return 0
    bash "$CLUSTER_SH" stop -i "$BOX_ID" || return 1
    BOX_ID=
}

brun() {
    secs=$1
    shift
    timeout -k 5 "$secs" srun --mpi=$BOX_MPI --kill-on-bad-exit=1 "$@"
}

bprog() {
    for p in "$top_builddir/apps/$1/hpc-$1" "$top_builddir/tests/$1"; do
        [ -x "$p" ] && { echo "$p"; return; }
    done
    fail "no program $1 in $top_builddir"
}

node_healthy() {
    nodes=$(sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$SLURM_CONF")
    for n in $nodes; do
        i=0
        while :; do
            st=$(sinfo -h -n "$n" -o %T 2>/dev/null)
            case $st in idle) break ;; down*|drain*|fail*) i=50 ;; esac
            i=$((i + 1))
            [ $i -gt 50 ] && break
            sleep 0.2
        done
        [ "$st" = idle ] && continue
        echo "node $n is '$st': reviving it"
        box kill "$n" 2>/dev/null
        box revive "$n" || return 1
    done
    # idle is the controller's word; a step on every node is the proof.  In
    # CI the next case's first step once failed to launch on a node revived
    # a moment before ('Communication connection failure') while sinfo
    # said idle: the next case starts once a step runs everywhere.
    all=$(echo "$nodes" | wc -l)
    for try in 1 2 3 4 5; do
        out=$(brun 30 -N"$all" -n"$all" true 2>&1) && return 0
        echo "node check, try $try: a step on all $all nodes failed: $(echo "$out" | head -3 | tr '\n' ' ')"
        sleep 2
    done
    return 1
}

rank_hosts() { awk '/^ +[0-9]+  / { print $2 }' "$1"; }

# the job's state and exit code, for failure lines
bstate() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' | sed 's/ Reason.*ExitCode/ ExitCode/'; }
