# bench_lib.sh - what apps/train/bench*.sh share (sourced by them, with
# $build set and $0 the benchmark): the programs of the build folder, the
# defaults of MPIEXEC (the launcher configure chose, tests/mpiexec-wrap)
# and PYTHON (/usr/bin/python3), a scratch folder $dir removed at exit,
# one BLAS thread a rank, and
#   median           the median of the numbers on standard input
#   rates CSV        the samples/s of a metrics.csv's rows after the first
#                    (warm-up), by the column's name
me=$(basename "$0")
prog=$build/apps/train/hpc-train
odegen=$build/apps/odegen/hpc-odegen
[ -x "$prog" ] || { echo "$me: no $prog (pass the build folder)" >&2; exit 2; }
MPIEXEC=${MPIEXEC:-$build/tests/mpiexec-wrap -n}
PYTHON=${PYTHON:-/usr/bin/python3}
dir=$(mktemp -d "${TMPDIR:-/tmp}/${me%.sh}.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rates() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples_per_s") c = i }
             NR > 2 && $c > 0 { print $c }' "$1"
}
