#!/bin/sh
# bench.sh - hpc-odegen's figure of merit next to scipy's, measured in the
# same run on the same machine.
#
#   apps/odegen/bench.sh [BUILD_DIR]
#
# Environment: N (trajectories per hpc-odegen run, default 200000),
# SCIPY_N (trajectories for the scipy loop, default 300), NP (ranks for the
# parallel figure, default 2), REPEAT (runs per figure, median taken,
# default 3), PYTHON (a Python with scipy, default /usr/bin/python3),
# MPIEXEC (default: the launcher configure chose, from tests/mpiexec-wrap),
# TMPDIR (where the output files go; they are deleted), METHOD (RK45,
# RK23 or DOP853 for both scipy and hpc-odegen, default RK45; BDF or ESDIRK
# for the stiff benchmark below).
#
# The classic example: decay-sin, 10 dims, t in [0, 10], rtol 1e-3,
# atol 1e-6, 101 output times, x0 ~ U[0, 1).  Prints:
#   scipy      solve_ivp(RK45, t_eval) in a Python loop, one core
#   solver     hpc-odegen's integration alone, per core (from its summary)
#   file       the same with the classic system's file compiled at run time
#              (--system-file data/systems/decay-sin.c) against the
#              built-in, solver alone, 1 rank (goal >= 0.95x)
#   end-to-end hpc-odegen wall time including the HDF5 writes, 1 and NP ranks,
#              against the solver alone (goal >= 0.8x at 1 rank) and, at NP
#              ranks, against 1 rank (goal >= 1.8x) or, where the run is
#              I/O bound, its write rate against the disk's (dd with
#              fdatasync in the same folder; goal >= 0.8x)
#
# METHOD=BDF or ESDIRK: the stiff benchmark instead, Robertson's kinetics
# (tests/odegen_systems/robertson.c, its Jacobian), t in [0, 100], rtol
# 1e-6, atol 1e-10, 11 output times, x0[0] ~ U[0.5, 1); N defaults to
# 20000, SCIPY_N to 50.  Prints, each per core:
#   hpc-odegen  the implicit method's solver alone, 1 rank (its summary)
#   cvode       (BDF) CVODE called directly on the same problems
#               (apps/odegen/cvode_direct: same tolerances, dense LU, the
#               Jacobian, output times and initial states, read from
#               hpc-odegen's file), and hpc-odegen / CVODE (goal >= 0.9x)
#   scipy       solve_ivp(BDF) and solve_ivp(Radau) with the Jacobian,
#               a Python loop over the first SCIPY_N of the same states,
#               and hpc-odegen / scipy (goal >= 100x)
set -e
build=${1:-.}
prog=$build/apps/odegen/hpc-odegen
[ -x "$prog" ] || { echo "bench.sh: no $prog (pass the build folder)" >&2; exit 2; }
METHOD=${METHOD:-RK45}
case $METHOD in BDF|bdf|ESDIRK|esdirk) stiff=1 N=${N:-20000} SCIPY_N=${SCIPY_N:-50} ;; esac
N=${N:-200000}
SCIPY_N=${SCIPY_N:-300}
NP=${NP:-2}
REPEAT=${REPEAT:-3}
sysfile=$(cd "$(dirname "$0")/../.." && pwd)/data/systems/decay-sin.c
PYTHON=${PYTHON:-/usr/bin/python3}
MPIEXEC=${MPIEXEC:-$build/tests/mpiexec-wrap -n}
dir=$(mktemp -d "${TMPDIR:-/tmp}/odegen-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export HPC_ODEGEN_CACHE="$dir/cache"   # compiled once, before the timed runs

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

scipy_rate() {   # one core: no BLAS threads (numpy.dot would spawn them)
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PYTHON" - "$SCIPY_N" "$METHOD" <<'EOF'
import sys, time
import numpy as np
from scipy.integrate import solve_ivp
n = int(sys.argv[1])
rng = np.random.default_rng(0)
x0 = rng.random((n, 10))
t = np.linspace(0, 10, 101)
f = lambda t, x: -x * t - x * x + np.sin(x)
t0 = time.perf_counter()
for i in range(n):
    solve_ivp(f, (0, 10), x0[i], method=sys.argv[2], t_eval=t)
print(n / (time.perf_counter() - t0))
EOF
}

# run NP [OPTIONS]: one hpc-odegen run; prints "end-to-end solver-per-core"
run() {
    rm -f "$dir/b.h5"
    np=$1
    shift
    $MPIEXEC "$np" "$prog" -n "$N" --method "$METHOD" "$@" --out "$dir/b.h5" | sed -n \
        's/.* \([0-9.]*\) traj\/s on .*solver alone \([0-9.]*\) traj\/s per rank.*/\1 \2/p'
    stat -c %s "$dir/b.h5" > "$dir/bytes"
}

# the disk under TMPDIR: MB/s of 1 GiB written and fdatasync'ed
disk_rate() {
    dd if=/dev/zero of="$dir/dd" bs=16M count=64 conv=fdatasync 2>&1 |
        sed -n 's/.* s, \([0-9.]*\) \([MG]\)B\/s.*/\1 \2/p' | awk '{ print $2 == "G" ? $1 * 1000 : $1 }'
    rm -f "$dir/dd"
}

if [ -n "$stiff" ]; then
    # shellcheck source=apps/odegen/bench_stiff.sh
    . "$(dirname "$0")/bench_stiff.sh"
    exit 0
fi

echo "bench.sh: classic example, $METHOD, N=$N, $REPEAT runs each, median; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$dir/scipy"; : > "$dir/r1"; : > "$dir/rn"; : > "$dir/disk"; : > "$dir/rf"
"$prog" --system-file "$sysfile" --method "$METHOD" -n 8 --nt 2 --out "$dir/warm.h5" > /dev/null
for i in $(seq "$REPEAT"); do   # interleaved, so load changes hit all alike
    scipy_rate >> "$dir/scipy"
    disk_rate >> "$dir/disk"
    run 1 >> "$dir/r1"
    run 1 --system-file "$sysfile" >> "$dir/rf"
    run "$NP" >> "$dir/rn"
done
sf=$(cut -d' ' -f2 "$dir/rf" | median)
sp=$(median < "$dir/scipy")
s1=$(cut -d' ' -f2 "$dir/r1" | median)
e1=$(cut -d' ' -f1 "$dir/r1" | median)
sn=$(cut -d' ' -f2 "$dir/rn" | median)
en=$(cut -d' ' -f1 "$dir/rn" | median)
dk=$(median < "$dir/disk")
mb=$(awk '{ print $1 / 1e6 }' "$dir/bytes")
awk -v sf="$sf" -v m="$METHOD" -v sp="$sp" -v s1="$s1" -v e1="$e1" -v sn="$sn" -v en="$en" -v np="$NP" -v dk="$dk" -v mb="$mb" -v n="$N" 'BEGIN {
    printf "scipy %-6s loop (1 core):        %9.0f traj/s\n", m, sp
    printf "hpc-odegen solver, per core:       %9.0f traj/s  = %.0fx scipy   (goal >= 100x)\n", s1, s1 / sp
    printf "the same from --system-file:       %9.0f traj/s  = %.3fx built-in (goal >= 0.95x)\n", sf, sf / s1
    printf "hpc-odegen solver, per core, %d ranks: %7.0f traj/s\n", np, sn
    printf "end-to-end incl. HDF5, 1 rank:     %9.0f traj/s  = %.0fx scipy\n", e1, e1 / sp
    printf "end-to-end / solver alone, 1 rank: %9.2fx           (goal >= 0.8x)\n", e1 / s1
    printf "end-to-end incl. HDF5, %d ranks:    %9.0f traj/s  = %.2fx 1 rank (goal >= 1.8x)\n", np, en, en / e1
    w = mb * en / n
    printf "output %.0f MB, written at %.0f MB/s at %d ranks; the disk takes %.0f MB/s (dd, fdatasync)\n", mb, w, np, dk
    if (en / e1 >= 1.8) printf "verdict: compute bound, %d ranks %.2fx 1 rank (goal >= 1.8x met)\n", np, en / e1
    else if (w >= 0.5 * dk) printf "verdict: I/O bound, %.2fx the disk (goal >= 0.8x %s)\n", w / dk, (w / dk >= 0.8 ? "met" : "missed")
    else printf "verdict: neither 1.8x nor near the disk: %.2fx 1 rank, %.2fx the disk (goal missed)\n", en / e1, w / dk
}'
