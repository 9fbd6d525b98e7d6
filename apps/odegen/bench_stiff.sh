# bench_stiff.sh - the stiff half of apps/odegen/bench.sh (METHOD=BDF or
# ESDIRK), sourced by it: its variables ($prog, $build, $dir, $N, $SCIPY_N,
# $REPEAT, $METHOD, $PYTHON) and functions (run, median) are in scope.
# Robertson's kinetics as in tests/odegen_stiff.sh; see bench.sh's header.
# shellcheck shell=sh disable=SC2154
rob=$(cd "$(dirname "$0")/../.." && pwd)/tests/odegen_systems/robertson.c
direct=$build/apps/odegen/cvode_direct
set -- --system-file "$rob" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 --rtol 1e-6 --atol 1e-10

# scipy's BDF and Radau with the Jacobian over the first SCIPY_N initial
# states of hpc-odegen's file, one core; prints "BDF-rate Radau-rate"
scipy_stiff() {
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$PYTHON" - "$1" "$SCIPY_N" <<'EOF'
import sys, time
import h5py
import numpy as np
from scipy.integrate import solve_ivp
h = h5py.File(sys.argv[1], "r")
n = int(sys.argv[2])
a = h.attrs
k1, k2, k3 = a["param_k1"], a["param_k2"], a["param_k3"]
rtol, atol, t = float(a["rtol"]), float(a["atol"]), h["t"][...]
x0 = h["x0"][:n]

def f(t, x):
    r1, r2, r3 = k1 * x[0], k2 * x[1] * x[2], k3 * x[1] * x[1]
    return [-r1 + r2, r1 - r2 - r3, r3]

def jac(t, x):
    return [[-k1, k2 * x[2], k2 * x[1]], [k1, -k2 * x[2] - 2 * k3 * x[1], -k2 * x[1]], [0, 2 * k3 * x[1], 0]]

out = []
for m in ("BDF", "Radau"):
    t0 = time.perf_counter()
    for i in range(len(x0)):
        solve_ivp(f, (t[0], t[-1]), x0[i], method=m, t_eval=t, rtol=rtol, atol=atol, jac=jac)
    out.append(len(x0) / (time.perf_counter() - t0))
print(*out)
EOF
}

echo "bench.sh: Robertson, $METHOD, N=$N (scipy $SCIPY_N), $REPEAT runs each, median; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$dir/r1"; : > "$dir/cv"; : > "$dir/scipy"
"$prog" "$@" --method "$METHOD" -n 8 --nt 2 --out "$dir/warm.h5" > /dev/null   # the system file compiled
for _ in $(seq "$REPEAT"); do   # interleaved, so load changes hit all alike
    run 1 "$@" >> "$dir/r1"
    if [ "$METHOD" = BDF ] || [ "$METHOD" = bdf ]; then
        "$direct" "$dir/b.h5" > "$dir/cv.line"
        sed 's/.*: \([0-9.]*\) traj\/s;.*/\1/' "$dir/cv.line" >> "$dir/cv"
    fi
    scipy_stiff "$dir/b.h5" >> "$dir/scipy"
done
s1=$(cut -d' ' -f2 "$dir/r1" | median)
bdf=$(cut -d' ' -f1 "$dir/scipy" | median)
rad=$(cut -d' ' -f2 "$dir/scipy" | median)
cv=$(median < "$dir/cv")
[ -s "$dir/cv" ] && sed 's/.*traj\/s; /cvode_direct (last run): /' "$dir/cv.line"
awk -v m="$METHOD" -v s1="$s1" -v cv="$cv" -v bdf="$bdf" -v rad="$rad" 'BEGIN {
    printf "hpc-odegen %-5s solver, per core:  %9.0f traj/s\n", m, s1
    if (cv != "") printf "CVODE called directly, per core:  %9.0f traj/s  hpc-odegen = %.3fx CVODE (goal >= 0.9x)\n", cv, s1 / cv
    printf "scipy BDF loop (1 core, jac):     %9.1f traj/s  hpc-odegen = %.0fx scipy BDF   (goal >= 100x)\n", bdf, s1 / bdf
    printf "scipy Radau loop (1 core, jac):   %9.1f traj/s  hpc-odegen = %.0fx scipy Radau\n", rad, s1 / rad
}'
