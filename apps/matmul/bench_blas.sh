#!/bin/sh
# bench_blas.sh - which BLAS, and which of its kernels, serves hpc-matmul
# and hpc-train best on this machine (issue 29): the same runs under each
# BLAS variant, interleaved REPEAT times, the median kept; each row names
# the library and kernel that ran (hpc-info under the same environment,
# and the programs' own summary lines).  A benchmark, not a test: run it
# on a quiet machine, once on an Intel and once on an AMD CPU.
#
#   apps/matmul/bench_blas.sh [BUILD-DIR]
#   VARIANTS="own auto blis" N=2048 REPEAT=5 apps/matmul/bench_blas.sh
#
# Variants (VARIANTS, default "own auto blis"):
#   own        OpenBLAS's own choice of kernel (HPC_BLAS_KERNEL=off)
#   auto       hpckit's choice (HPC_BLAS_KERNEL=auto, the default)
#   NAME       OPENBLAS_CORETYPE=NAME (Haswell, SkylakeX, Zen, ...)
#   blis       BLIS (Debian's libblis, put in front of OpenBLAS with
#              LD_PRELOAD: cblas_* and the Fortran BLAS are BLIS's), its
#              own choice of configuration
#   blis:ID    the same with BLIS_ARCH_TYPE=ID (BLIS 0.9's numbers: 0 skx,
#              3 haswell, 6 zen3 - for CPUs it does not know: it runs
#              "generic" on Zen 5)
# Runs, one rank and one BLAS thread each (singletons: the environment
# reaches them as set):
#   hpc-matmul --gen N,N,N, float64 and float32 (GFLOP/s)
#   hpc-train 11-256-256-10 tanh, MSE, Adam, batch 256, --preload, STEPS
#   steps (samples/s: the median of 100-step windows after the first)
# OPENBLAS_CORETYPE and HPC_BLAS_KERNEL set outside are ignored: each
# variant sets its own.  Environment: N (2048), STEPS (1200), TRAJ (1000),
# REPEAT (3), BLIS (the libblis.so.4 to preload), TMPDIR.
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/_build/mpich}" && pwd)
VARIANTS=${VARIANTS:-"own auto blis"}
N=${N:-2048}
STEPS=${STEPS:-1200}
TRAJ=${TRAJ:-1000}
REPEAT=${REPEAT:-3}
BLIS=${BLIS:-$(ls /usr/lib/*/libblis.so.4 /usr/lib/libblis.so.4 2>/dev/null | head -n 1)}
info=$build/apps/info/hpc-info
mm=$build/apps/matmul/hpc-matmul
tr=$build/apps/train/hpc-train
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_blas.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1

# with VARIANT CMD...: CMD under the variant's BLAS
with() {
    _v=$1
    shift
    case $_v in
    own) env -u OPENBLAS_CORETYPE HPC_BLAS_KERNEL=off "$@" ;;
    auto) env -u OPENBLAS_CORETYPE HPC_BLAS_KERNEL=auto "$@" ;;
    blis | blis:*)
        [ -n "$BLIS" ] || { echo "bench_blas.sh: no libblis.so.4 (apt-get install libblis4, or set BLIS)" >&2; return 1; }
        if [ "$_v" = blis ]; then
            env -u OPENBLAS_CORETYPE -u BLIS_ARCH_TYPE LD_PRELOAD="$BLIS" "$@"
        else
            env -u OPENBLAS_CORETYPE LD_PRELOAD="$BLIS" BLIS_ARCH_TYPE="${_v#blis:}" "$@"
        fi ;;
    *) env HPC_BLAS_KERNEL=auto OPENBLAS_CORETYPE="$_v" "$@" ;;
    esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
gflops() { sed -n 's/.* \([0-9.]*\) GFLOP\/s.*/\1/p' | head -n 1; }
rates() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples_per_s") c = i }
             NR > 2 && $c > 0 { print $c }' "$1" | median
}

"$build/apps/odegen/hpc-odegen" -q -n "$TRAJ" --out "$dir/ode.h5"
targs="--data $dir/ode.h5 --layers 11,256,256,10 --act tanh --loss mse --optim adam --lr 1e-3 --batch 256
       --steps $STEPS --preload --log-every 100 --ckpt-every 0 --force -q"
"$info" | sed -n 's/^CPU: */CPU:  /p'
echo "one rank, one BLAS thread; hpc-matmul --gen $N,$N,$N; hpc-train 11-256-256-10 batch 256 --preload," \
     "$STEPS steps; $REPEAT runs each, interleaved, median; load $(cut -d' ' -f1-3 /proc/loadavg)"
for v in $VARIANTS; do
    with "$v" "$info" > "$dir/info.$v" 2>&1 || { cat "$dir/info.$v"; exit 1; }
    : > "$dir/f64.$v"; : > "$dir/f32.$v"; : > "$dir/tr.$v"
done
for i in $(seq "$REPEAT"); do
    for v in $VARIANTS; do
        with "$v" "$mm" --gen "$N,$N,$N" > "$dir/out" 2>&1 && gflops < "$dir/out" >> "$dir/f64.$v"
        grep -q "BLAS" "$dir/out" && sed -n 's/.*cpu, BLAS \([^)]*\)).*/\1/p' "$dir/out" > "$dir/kernel.$v"
        with "$v" "$mm" --gen "$N,$N,$N" --dtype float32 > "$dir/out" 2>&1 && gflops < "$dir/out" >> "$dir/f32.$v"
        with "$v" "$tr" $targs --out "$dir/run" && rates "$dir/run/metrics.csv" >> "$dir/tr.$v"
    done
done
printf '%-10s %-48s %14s %14s %16s\n' variant "BLAS (hpc-info)" "matmul f64" "matmul f32" "train samples/s"
for v in $VARIANTS; do
    printf '%-10s %-48s %14s %14s %16s\n' "$v" \
        "$(sed -n 's/^BLAS: *\(.*kernel [^ ]*\).*/\1/p' "$dir/info.$v" | cut -c1-48)" \
        "$(median < "$dir/f64.$v")" "$(median < "$dir/f32.$v")" "$(median < "$dir/tr.$v")"
    k=$(cat "$dir/kernel.$v" 2>/dev/null || true)
    if [ -n "$k" ] && [ "$k" != "$(sed -n 's/^BLAS: .*kernel \([^ ]*\).*/\1/p' "$dir/info.$v")" ]; then
        echo "  note: hpc-matmul ran kernel $k"
    fi
done
