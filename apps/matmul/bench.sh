#!/bin/sh
# bench.sh - hpc-matmul's scaling study: for each size and rank count,
# hpc-matmul (one BLAS thread per rank), one process's OpenBLAS dgemm with
# as many threads as ranks, and ScaLAPACK's pdgemm on the same grid (one
# thread per rank), side by side in one run; each measured REPEAT times,
# interleaved, the median kept.  A weak-scaling row (n grows with
# sqrt(ranks)), a table, and a gnuplot PNG of GFLOP/s against ranks with
# the ideal line.  A benchmark, not a test: run it on a quiet machine.
#
#   apps/matmul/bench.sh [BUILD-DIR]
#   SIZES="1024 2048 4096" RANKS="1 2" NB=256 REPEAT=3 OUT=matmul-bench apps/matmul/bench.sh
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/_build/mpich}" && pwd)
SIZES=${SIZES:-"1024 2048 4096"}
RANKS=${RANKS:-"1 2"}
NB=${NB:-256}
PNB=${PNB:-128}
REPEAT=${REPEAT:-3}
OUT=${OUT:-matmul-bench}
mpiexec=$(sed -n 's/^MPIEXEC = //p' "$build/Makefile")
mm=$build/apps/matmul/hpc-matmul
dg=$build/apps/matmul/dgemm_bench
pd=$build/apps/matmul/pdgemm_bench
mkdir -p "$OUT"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
[ -x "$pd" ] || echo "note: no ScaLAPACK (pdgemm_bench not built): pdgemm column empty"
# the machine and the BLAS kernel the figures are made with (issue 29);
# the baselines (dgemm_bench, pdgemm_bench: no app kit, no restart) are
# given the kernel hpc-matmul runs, so that they compare like with like
"$build/apps/info/hpc-info" > "$OUT/.info"
grep -E '^(CPU|BLAS):' "$OUT/.info"
kernel=$(sed -n 's/^BLAS: *OpenBLAS .*, kernel \([^ ]*\).*/\1/p' "$OUT/.info")
[ -z "$kernel" ] || export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-$kernel}"
rm -f "$OUT/.info"

grid() {   # the grid hpc-matmul picks for P ranks: PRxPC
    _p=$1 _r=1 _d=1
    while [ $((_d * _d)) -le "$_p" ]; do [ $((_p % _d)) = 0 ] && _r=$_d; _d=$((_d + 1)); done
    echo "${_r}x$((_p / _r))"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate() { sed -n 's/.* \([0-9.]*\) GFLOP\/s.*/\1/p' | head -1; }

one() {   # one KIND N P: GFLOP/s of one run
    _g=$(grid "$3")
    case $1 in
    hpc) $mpiexec -n "$3" "$mm" --gen "$2,$2,$2" --nb "$NB" 2>/dev/null | rate ;;
    dgemm) OPENBLAS_NUM_THREADS=$3 "$dg" "$2" "$3" 1 | rate ;;
    pdgemm) [ -x "$pd" ] && $mpiexec -n "$3" "$pd" "$2" "$2" "$2" "${_g%x*}" "${_g#*x}" "$PNB" 1 | rate ;;
    esac
}

measure() {   # measure N P: three medians, interleaved repetitions
    n=$1 p=$2
    : > "$OUT/.hpc"; : > "$OUT/.dgemm"; : > "$OUT/.pdgemm"
    for i in $(seq "$REPEAT"); do
        for kind in hpc dgemm pdgemm; do one $kind "$n" "$p" >> "$OUT/.$kind" || true; done
    done
    echo "$(median < "$OUT/.hpc") $(median < "$OUT/.dgemm") $(median < "$OUT/.pdgemm")"
}

csv=$OUT/matmul.csv
echo "n,ranks,grid,hpc_matmul_gflops,dgemm_same_threads_gflops,pdgemm_gflops,vs_dgemm,vs_pdgemm" > "$csv"
printf '%-8s %5s %5s  %12s %16s %12s  %9s %9s\n' n ranks grid hpc-matmul "dgemm(T=ranks)" pdgemm "vs dgemm" "vs pdgemm"
for n in $SIZES; do
    for p in $RANKS; do
        set -- $(measure "$n" "$p")
        h=$1 d=$2 s=${3:-}
        vd=$(awk -v a="$h" -v b="$d" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
        vs=$(awk -v a="$h" -v b="$s" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
        printf '%-8s %5s %5s  %12s %16s %12s  %9s %9s\n' "$n" "$p" "$(grid "$p")" "$h" "$d" "${s:--}" "${vd}x" "${vs}x"
        echo "$n,$p,$(grid "$p"),$h,$d,$s,$vd,$vs" >> "$csv"
    done
done
# weak scaling: the same work per rank, n = n0 sqrt(P)
n0=$(echo $SIZES | awk '{ print $1 }')
echo "weak scaling (n = $n0 sqrt(ranks)): hpc-matmul GFLOP/s per rank"
for p in $RANKS; do
    n=$(awk -v a="$n0" -v p="$p" 'BEGIN { printf "%d", a * sqrt(p) / 64 + 0.5 }')
    n=$((n * 64))
    : > "$OUT/.w"
    for i in $(seq "$REPEAT"); do one hpc "$n" "$p" >> "$OUT/.w"; done
    w=$(median < "$OUT/.w")
    echo "  $p ranks, n $n: $w GFLOP/s, $(awk -v a="$w" -v p="$p" 'BEGIN { printf "%.2f", a / p }') per rank"
done
rm -f "$OUT/.hpc" "$OUT/.dgemm" "$OUT/.pdgemm" "$OUT/.w"

# strong scaling plot for the largest size
big=$(echo $SIZES | awk '{ print $NF }')
if command -v gnuplot > /dev/null 2>&1; then
    awk -F, -v n="$big" 'NR > 1 && $1 == n { print $2, $4, $5, $6 }' "$csv" > "$OUT/strong.dat"
    one=$(awk 'NR == 1 { print $2 }' "$OUT/strong.dat")
    gnuplot <<EOF
set terminal pngcairo size 900,600 noenhanced
set output '$OUT/matmul-scaling.png'
set title 'hpc-matmul strong scaling, n = $big float64, 1 BLAS thread per rank'
set xlabel 'ranks'
set ylabel 'GFLOP/s'
set key top left
set grid
set xtics 1
plot '$OUT/strong.dat' using 1:2 with linespoints lw 2 title 'hpc-matmul (SUMMA)', \
     '' using 1:3 with linespoints title 'OpenBLAS dgemm, threads = ranks', \
     '' using 1:4 with linespoints title 'ScaLAPACK pdgemm', \
     $one * x with lines dt 2 title 'ideal'
EOF
    echo "plot: $OUT/matmul-scaling.png"
fi
echo "table: $csv"
