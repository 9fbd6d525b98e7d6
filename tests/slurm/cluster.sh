# cluster.sh - a real, private Slurm cluster for tests: slurmctld and slurmd
# on this machine, with a configuration, state and logs of their own in a
# temporary folder, on ports of their own.  Source it, then:
#
#   slurm_start [CPUS]   start both daemons, wait until the node is idle
#   slurm_wait JOB SECS  wait for a batch job; true if it completed with 0
#   slurm_stop           stop them (also run at exit)
#
# Clients find the cluster through SLURM_CONF, which slurm_start exports.
# Skips the calling test (exit 77) where Slurm is not installed or cannot
# start here (not root).

slurm_skip() { echo "SKIP: $*"; exit 77; }

# slurm_conf_sched MPI: the slurm.conf lines every test cluster shares
# (this one and tests/cluster/cluster.sh's): no binding, cores as the
# unit, nodes that may claim more CPUs than they have (for 3- and 4-rank
# tests), srun's --mpi default, nodes back in service when they return
slurm_conf_sched() {
    printf '%s\n' TaskPlugin=task/none SchedulerType=sched/builtin SelectType=select/cons_tres \
        SelectTypeParameters=CR_Core SlurmdParameters=config_overrides "MpiDefault=$1" ReturnToService=2
}

slurm_start() {
    cpus=${1:-4}
    for p in slurmctld slurmd srun sbatch sinfo; do
        command -v $p >/dev/null 2>&1 || [ -x /usr/sbin/$p ] || slurm_skip "$p not installed (apt-get install slurmctld slurmd slurm-client)"
    done
    [ "$(id -u)" = 0 ] || slurm_skip "slurmd must run as root here"
    PATH=$PATH:/usr/sbin
    SLURM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hpc_slurm.XXXXXX")
    FAIL_SHOW="${FAIL_SHOW:-} $SLURM_DIR/*.log"   # testlib.sh's fail shows them
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool"
    # ports from the test's pid, so parallel test runs get clusters of their own
    port=$((20000 + ($$ % 2000) * 2))
    # slurmd finds its node by the short host name; the daemons talk over
    # loopback, so a host name that does not resolve here does not matter
    host=$(hostname -s 2>/dev/null || hostname)
    mpi=pmi2
    [ "$HPC_MPI_FLAVOR" = openmpi ] && mpi=pmix
    cat >"$SLURM_DIR/slurm.conf" <<EOC
ClusterName=hpctest$$
SlurmctldHost=$host(127.0.0.1)
# A private test cluster: no munge daemon to run, no accounting database.
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/pgid
$(slurm_conf_sched "$mpi")
# job ids of their own: the pmix plugin names its temporary folders after
# the job and step, and tests run side by side (make -j) would share them
FirstJobId=$((1000 + ($$ % 30000) * 100))
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=2
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOC
    export SLURM_CONF=$SLURM_DIR/slurm.conf
    trap slurm_stop EXIT
    slurmctld -f "$SLURM_CONF" || slurm_skip "slurmctld did not start: $(tail -3 "$SLURM_DIR/slurmctld.log")"
    slurmd -f "$SLURM_CONF" -N "$host" || slurm_skip "slurmd did not start: $(tail -3 "$SLURM_DIR/slurmd.log")"
    i=0
    until sinfo -h -o %T 2>/dev/null | grep -q idle; do
        i=$((i + 1))
        [ $i -gt 60 ] && { tail -5 "$SLURM_DIR"/*.log; slurm_skip "Slurm node not idle after 30 s"; }
        sleep 0.5
    done
}

# slurm_wait JOBID SECONDS: wait for a batch job to end (polling twice a
# second: sbatch --wait polls slowly); true if it completed with exit 0.
slurm_wait() {
    i=0
    while squeue -h -j "$1" 2>/dev/null | grep -q .; do
        i=$((i + 1))
        [ $i -gt $(($2 * 2)) ] && { scancel "$1"; return 1; }
        sleep 0.5
    done
    scontrol -o show job "$1" | grep -q 'JobState=COMPLETED .*ExitCode=0:0'
}

slurm_stop() {
    [ -n "$SLURM_DIR" ] || return 0
    for d in slurmd slurmctld; do
        [ -f "$SLURM_DIR/$d.pid" ] && kill "$(cat "$SLURM_DIR/$d.pid")" 2>/dev/null
    done
    sleep 1
    for d in slurmd slurmctld; do
        [ -f "$SLURM_DIR/$d.pid" ] && kill -9 "$(cat "$SLURM_DIR/$d.pid")" 2>/dev/null
    done
    rm -rf "$SLURM_DIR"
    SLURM_DIR=
}
