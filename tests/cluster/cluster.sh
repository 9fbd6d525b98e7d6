#!/bin/bash
# cluster.sh - a cluster in a box: N "nodes" on this machine, each a set of
# Linux namespaces (net, uts, ipc, mount, pid) with its own host name, its
# own /dev/shm and /proc, and an address on a private bridge; Slurm
# (slurmctld on a "head" node, one slurmd per node) with munge.  The rest
# of the file system is shared, as NFS is on a cluster.  Nothing leaves
# the machine: the nodes have no route but the bridge.
#
#   cluster.sh start [-n NODES] [-i ID] [--cpus C] [--mem NODE=MiB]
#   cluster.sh env   [-i ID]        the lines that point Slurm's clients at it
#   cluster.sh stop  [-i ID]        stop it; checks that nothing is left
#   cluster.sh status [-i ID]
#   cluster.sh exec  [-i ID] NODE CMD...     run CMD inside NODE
#   cluster.sh kill|freeze|thaw|cut|mend|revive|restart-slurmd [-i ID] NODE
#   cluster.sh shape [-i ID] RATE|off        an HTB bandwidth limit (1gbit)
#   cluster.sh mpirun-rsh [-i ID]            prints the path of the rsh agent
#                                            for mpiexec/mpirun without Slurm
#
# ID (0..9, default 0, or $HPCK_CLUSTER_ID) keeps clusters apart: bridge
# hpckID, subnet 10.77.ID.0/24 (the head is .10, node k is .10+k), folder
# /tmp/hpckit-clusterID.  A second start of the same ID refuses in one
# line; where this machine cannot run it (not root, no unshare or nsenter,
# no bridge support, Slurm or munge missing) start prints one line and
# exits 77.  Faults: kill (SIGKILL to every process of the node), freeze
# and thaw (SIGSTOP/SIGCONT to them), cut and mend (its link down/up),
# revive (a killed node started again, slurmd included), restart-slurmd.
set -u
PATH=$PATH:/usr/sbin:/sbin
me=cluster.sh
. "$(dirname "$0")/../slurm/cluster.sh"   # slurm_conf_sched

die() { echo "$me: $*" >&2; exit 1; }
skip() { echo "$me: cannot run here: $*" >&2; exit 77; }

cmd=${1:-}
[ $# -gt 0 ] && shift
ID=${HPCK_CLUSTER_ID:-0}
NODES=2
CPUS=2
MEMS=
while [ $# -gt 0 ]; do
    case $1 in
    -i) ID=${2:-}; shift 2 ;;
    -n) NODES=${2:-}; shift 2 ;;
    --cpus) CPUS=${2:-}; shift 2 ;;
    --mem) MEMS="$MEMS ${2:-}"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
case $ID in [0-9]) ;; *) echo "$me: -i $ID: expected 0..9" >&2; exit 2 ;; esac
BR=hpck$ID
NET=10.77.$ID
DIR=/tmp/hpckit-cluster$ID

node_pid() { cat "$DIR/nodes/$1.pid" 2>/dev/null; }
# NODE's PID 1 is running (not a zombie, and still ours: PIDs are reused)
node_alive() {
    p=$(node_pid "$1") || return 1
    tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline" | grep -q "$DIR/node-init.sh $1 " || return 1
    [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]
}
# wait until NODE's PID 1 is gone (kill -0 passes on a zombie)
node_wait_gone() {
    for _ in $(seq 200); do node_alive "$1" || return 0; sleep 0.05; done
    return 1
}
node_names() { cat "$DIR/names" 2>/dev/null; }
in_node() {   # in_node NODE CMD...: run CMD in NODE's namespaces, here
    n=$1; shift
    p=$(node_pid "$n") || die "no node $n in cluster $ID"
    nsenter -t "$p" -n -u -i -m -p --wd="$PWD" "$@"
}
# every process of a node: its PID 1 and what descends from it (the
# node's pid namespace holds exactly these)
node_procs() {
    p=$(node_pid "$1") || return
    ns=$(ps -o pidns= -p "$p" | tr -d ' ')
    [ -n "$ns" ] && [ "$ns" != - ] || return
    ps -e -o pid=,pidns= | awk -v ns="$ns" '$2 == ns { print $1 }'
}

# ---- start ------------------------------------------------------------
check_can() {
    [ "$(id -u)" = 0 ] || skip "needs root (namespaces, a bridge, slurmd)"
    for p in unshare nsenter ip slurmctld slurmd srun sbatch sinfo munged; do
        command -v $p >/dev/null 2>&1 || skip "$p not found"
    done
    unshare --net --uts --ipc --mount --pid --fork true 2>/dev/null || skip "unshare of net/uts/ipc/mount/pid namespaces refused"
    ip link add hpckprobe$ID type bridge 2>/dev/null || skip "no bridge support (ip link add type bridge refused)"
    ip link del hpckprobe$ID
}

write_hosts() {
    {
        echo "127.0.0.1 localhost"
        echo "$NET.10 head"
        for k in $(seq 1 "$NODES"); do echo "$NET.$((10 + k)) n$k"; done
        # hydra's proxies and srun's clients call back to this host by name
        echo "$NET.1 $(hostname) $(hostname -s 2>/dev/null) hpck-root"
    } > "$DIR/hosts"
}

write_node_init() {
    cat > "$DIR/node-init.sh" <<'EOF'
# PID 1 of a node: private /dev/shm, /etc/hosts, its own /sys (its eth0,
# with the cgroup tree kept: slurmd needs it), then wait, reaping orphans
name=$1 dir=$2
hostname "$name"
mount -t tmpfs -o size=50% tmpfs /dev/shm
mount --bind "$dir/hosts" /etc/hosts
t=$dir/nodes/$name.cg
mkdir -p "$t"
mount --rbind /sys/fs/cgroup "$t" && mount -t sysfs none /sys && mount --move "$t" /sys/fs/cgroup
rmdir "$t"
ip link set lo up
trap 'exit 0' TERM
touch "$dir/nodes/$name.ready"
while :; do sleep 3600 & wait $!; done
EOF
}

# start_node NAME ADDR: the namespaces, its PID 1, its link to the bridge
start_node() {
    name=$1 addr=$2
    rm -f "$DIR/nodes/$name.ready"
    setsid unshare --net --uts --ipc --mount --pid --fork --mount-proc --propagation slave \
        bash "$DIR/node-init.sh" "$name" "$DIR" < /dev/null > "$DIR/log/$name.init.log" 2>&1 &
    up=$!
    pid=
    for _ in $(seq 200); do
        pid=$(cat "/proc/$up/task/$up/children" 2>/dev/null | tr -d ' ')
        [ -n "$pid" ] && [ -e "$DIR/nodes/$name.ready" ] && break
        sleep 0.02
    done
    [ -n "$pid" ] && [ -e "$DIR/nodes/$name.ready" ] || die "node $name did not start: $(cat "$DIR/log/$name.init.log")"
    echo "$pid" > "$DIR/nodes/$name.pid"
    ip link add "$BR-$name" type veth peer name "$BR-${name}p" || die "veth for $name"
    ip link set "$BR-${name}p" netns "$pid" || die "moving the veth into $name"
    ip link set "$BR-$name" master "$BR" up
    nsenter -t "$pid" -n sh -c "ip link set $BR-${name}p name eth0 && ip addr add $addr/24 dev eth0 && ip link set eth0 up" ||
        die "addressing $name"
}

# a memory limit for every process of node $1 (a memory cgroup of its
# own, gone at stop); processes started later in the node (slurmd's jobs)
# inherit it.  The limit in MiB is remembered for revive.
apply_mem() {
    for m in $MEMS $(cat "$DIR/nodes/$1.mem" 2>/dev/null); do
        [ "${m%%=*}" = "$1" ] || continue
        echo "$m" > "$DIR/nodes/$1.mem"
        cg=$(mem_cgroup "$1")
        mkdir -p "$cg" && echo "$((${m#*=} * 1048576))" > "$cg/memory.limit_in_bytes" ||
            die "memory limit on $1 (cgroup $cg)"
        for p in $(node_procs "$1"); do echo "$p" > "$cg/cgroup.procs" || die "moving $p into $cg"; done
        return 0
    done
}

mem_cgroup() {   # the memory cgroup for node $1 (cgroup v1), under ours
    base=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/$$/cgroup)
    echo "$base/hpck$ID-$1"
}

start_munge() {
    mkdir -p "$DIR/munge/key" "$DIR/munge/run"
    chmod 700 "$DIR/munge/key"
    chmod 755 "$DIR/munge/run"
    dd if=/dev/urandom of="$DIR/munge/key/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge/key/munge.key"
    munged --force --socket="$DIR/munge/run/munge.sock" --key-file="$DIR/munge/key/munge.key" \
        --pid-file="$DIR/munge/run/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge/key/seed" ||
        die "munged did not start: $(tail -2 "$DIR/log/munged.log" 2>/dev/null)"
}

# the job epilog a site runs on each node (or job_container/tmpfs does):
# the job's temporary files go when it ends there.  Here: the folders
# Slurm's PMIx plugin makes in TmpFS, one per step (spmix_appdir_UID_JOB.STEP).
# A step that ended badly (a task launch failed elsewhere) can leave its
# folder behind; a requeued job runs its steps under the same ids, and
# the plugin then fails that step's launch on the node ("task 0 launch
# failed: Unspecified error", exit 137: seen in CI after a requeue).
write_epilog() {
    cat > "$DIR/epilog.sh" <<EOF
#!/bin/sh
rm -rf "$DIR/tmp/\${SLURMD_NODENAME:-none}"/spmix_appdir_*_"\${SLURM_JOB_ID:-none}".*
exit 0
EOF
    chmod +x "$DIR/epilog.sh"
}

write_slurm_conf() {
    mpi=pmi2
    write_epilog
    cat > "$DIR/slurm.conf" <<EOC
# written by cluster.sh: a cluster in a box ($NODES nodes on bridge $BR)
ClusterName=hpck$ID
SlurmctldHost=head($NET.10)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/run/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
TmpFS=$DIR/tmp/%n
Epilog=$DIR/epilog.sh
ProctrackType=proctrack/linuxproc
JobAcctGatherType=jobacct_gather/none
$(slurm_conf_sched "$mpi")
SlurmdTimeout=10
MessageTimeout=5
KillWait=2
InactiveLimit=0
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
EOC
    for k in $(seq 1 "$NODES"); do
        echo "NodeName=n$k NodeAddr=$NET.$((10 + k)) CPUs=$CPUS State=UNKNOWN" >> "$DIR/slurm.conf"
    done
    echo "PartitionName=box Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$DIR/slurm.conf"
}

start_slurmd() {
    mkdir -p "$DIR/spool/$1" "$DIR/tmp/$1"
    in_node "$1" slurmd -f "$DIR/slurm.conf" -N "$1" || die "slurmd on $1 did not start: $(tail -2 "$DIR/log/slurmd.$1.log")"
}

wait_idle() {   # until sinfo says every node is idle (or $1 s)
    export SLURM_CONF=$DIR/slurm.conf
    for _ in $(seq $(($1 * 10))); do
        [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$')" = "$(node_names | wc -w)" ] && return 0
        sleep 0.1
    done
    return 1
}

do_start() {
    case $NODES in [1-9]) ;; *) echo "$me: -n $NODES: expected 1..9 nodes" >&2; exit 2 ;; esac
    check_can
    if ip link show "$BR" > /dev/null 2>&1 || [ -e "$DIR" ]; then
        die "cluster $ID is already running (bridge $BR or $DIR exists): stop it with '$0 stop -i $ID'"
    fi
    t0=$(date +%s.%N)
    mkdir -p "$DIR/nodes" "$DIR/log" "$DIR/state" || die "cannot make $DIR"
    trap 'echo "$me: start failed; cleaning up" >&2; do_stop >/dev/null 2>&1' EXIT
    echo head > "$DIR/names.all"
    for k in $(seq 1 "$NODES"); do echo "n$k"; done > "$DIR/names"
    cat "$DIR/names" >> "$DIR/names.all"
    write_hosts
    write_node_init
    start_munge
    ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up || die "bridge $BR"
    start_node head "$NET.10"
    for k in $(seq 1 "$NODES"); do start_node "n$k" "$NET.$((10 + k))"; done
    write_slurm_conf
    in_node head slurmctld -f "$DIR/slurm.conf" || die "slurmctld did not start: $(tail -2 "$DIR/log/slurmctld.log")"
    for n in $(node_names); do start_slurmd "$n" && apply_mem "$n"; done
    wait_idle 30 || die "the nodes are not idle after 30 s: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
    trap - EXIT
    printf '%s: cluster %s up: %s nodes (%s) on %s, %.1f s; use it with:\n  export SLURM_CONF=%s\n' \
        "$me" "$ID" "$NODES" "$(node_names | tr '\n' ' ' | sed 's/ $//')" "$BR" \
        "$(echo "$(date +%s.%N) - $t0" | bc)" "$DIR/slurm.conf"
}

# ---- stop -------------------------------------------------------------
do_stop() {
    [ -e "$DIR" ] || ip link show "$BR" > /dev/null 2>&1 || { echo "$me: cluster $ID is not running"; return 0; }
    for n in $(cat "$DIR/names.all" 2>/dev/null); do
        node_alive "$n" || continue
        [ -e "$DIR/nodes/$n.frozen" ] && kill -CONT $(node_procs "$n") 2>/dev/null
        kill -KILL "$(node_pid "$n")" 2>/dev/null
    done
    [ -f "$DIR/munge/run/munged.pid" ] && kill "$(cat "$DIR/munge/run/munged.pid")" 2>/dev/null
    # wait until every node's PID 1 is gone (not a zombie: kill -0 would pass)
    for n in $(cat "$DIR/names.all" 2>/dev/null); do node_wait_gone "$n"; done
    for _ in $(seq 100); do
        [ -f "$DIR/munge/run/munged.pid" ] && kill -0 "$(cat "$DIR/munge/run/munged.pid")" 2>/dev/null || break
        sleep 0.05
    done
    for n in $(cat "$DIR/names.all" 2>/dev/null); do
        cg=$(mem_cgroup "$n")
        [ -d "$cg" ] && rmdir "$cg"
        ip link del "$BR-$n" 2>/dev/null
    done
    ip link del "$BR" 2>/dev/null
    rm -rf "$DIR"
    left=$(leftovers)
    [ -z "$left" ] || die "stopped, but left behind: $left"
    echo "$me: cluster $ID stopped"
}

leftovers() {
    l=
    ip -o link show 2>/dev/null | grep -q " ${BR}[:@-]" && l="$l links($(ip -o link show | grep " ${BR}[:@-]" | awk '{print $2}' | tr -d '\n'))"
    grep -q "$DIR" /proc/mounts && l="$l mounts"
    ps -eo pid,args | grep -v grep | grep -q "$DIR" && l="$l processes($(ps -eo pid,args | grep -v grep | grep "$DIR" | awk '{print $1}' | tr '\n' ' '))"
    [ -e "$DIR" ] && l="$l $DIR"
    [ -d "$(mem_cgroup n1)" ] && l="$l cgroups"
    echo "$l"
}

# ---- faults and the rest ----------------------------------------------
fault() {
    what=$1 n=$2
    [ -n "$n" ] && [ -e "$DIR/nodes/$n.pid" ] || die "$what: no node '$n' in cluster $ID"
    case $what in freeze|thaw|cut|mend|restart-slurmd) node_alive "$n" || die "$what: node $n is not running" ;; esac
    case $what in
    kill) node_alive "$n" || die "kill: node $n is not running"
          kill -KILL "$(node_pid "$n")"
          node_wait_gone "$n" || die "kill: node $n did not die" ;;
    freeze) touch "$DIR/nodes/$n.frozen"
            kill -STOP $(node_procs "$n" | grep -vx "$(node_pid "$n")") ;;
    thaw) kill -CONT $(node_procs "$n")
          rm -f "$DIR/nodes/$n.frozen" ;;
    cut) ip link set "$BR-$n" down ;;
    mend) ip link set "$BR-$n" up ;;
    restart-slurmd)
        p=$(cat "$DIR/slurmd.$n.pid")
        kill "$p"
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
        start_slurmd "$n"
        apply_mem "$n"
        wait_idle 30 || die "restart-slurmd: $n not idle after 30 s" ;;
    revive)
        node_alive "$n" && die "revive: node $n is still running"
        ip link del "$BR-$n" 2>/dev/null
        k=${n#n}
        start_node "$n" "$NET.$((10 + k))"
        start_slurmd "$n"
        apply_mem "$n"
        # a node that went away is DOWN in slurmctld until told otherwise
        SLURM_CONF=$DIR/slurm.conf scontrol update nodename="$n" state=resume 2>/dev/null
        wait_idle 30 || die "revive: $n not idle after 30 s" ;;
    esac
}

do_shape() {
    for n in $(node_names); do
        tc qdisc del dev "$BR-$n" root 2>/dev/null
        [ "$1" = off ] && continue
        tc qdisc add dev "$BR-$n" root handle 1: htb default 10 r2q 1000 &&
            tc class add dev "$BR-$n" parent 1: classid 1:10 htb rate "$1" || die "shape $1 on $n"
    done
}

write_rsh() {   # an rsh for mpiexec/mpirun: HOST CMD... runs CMD in that node
    cat > "$DIR/rsh" <<EOF
#!/bin/sh
# rsh agent of cluster $ID: $DIR/rsh HOST CMD...
h=\$1; shift
while [ "\${h#-}" != "\$h" ]; do h=\$1; shift; done
exec nsenter -t "\$(cat $DIR/nodes/\$h.pid)" -n -u -i -m -p --wd="\$PWD" sh -c "\$*"
EOF
    chmod +x "$DIR/rsh"
}

case $cmd in
start) do_start; write_rsh ;;
stop) do_stop ;;
env) [ -e "$DIR/slurm.conf" ] || die "cluster $ID is not running"
     echo "export SLURM_CONF=$DIR/slurm.conf" ;;
status) [ -e "$DIR/slurm.conf" ] || { echo "$me: cluster $ID is not running"; exit 1; }
        SLURM_CONF=$DIR/slurm.conf sinfo -N ;;
exec) [ $# -ge 2 ] || { echo "usage: $me exec [-i ID] NODE CMD..." >&2; exit 2; }
      in_node "$@" ;;
kill|freeze|thaw|cut|mend|revive|restart-slurmd) fault "$cmd" "${1:-}" ;;
shape) [ $# = 1 ] || { echo "usage: $me shape [-i ID] RATE|off" >&2; exit 2; }
       do_shape "$1" ;;
mpirun-rsh) [ -x "$DIR/rsh" ] || die "cluster $ID is not running"; echo "$DIR/rsh" ;;
leftovers) leftovers ;;
*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
   [ -z "$cmd" ] || [ "$cmd" = help ] || [ "$cmd" = -h ] || [ "$cmd" = --help ] || exit 2 ;;
esac
