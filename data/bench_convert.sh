#!/bin/sh
# bench_convert.sh [ROWS] [COLS] - hpc-convert's CSV speed and memory: a
# CSV file of ROWS x COLS random numbers (default 2,000,000 x 10, about
# 400 MB) converted to /X,/Y; prints MB/s, rows/s and the peak RSS (which
# must stay near one block, whatever ROWS).  Run it on a quiet machine.
set -eu
rows=${1:-2000000}
cols=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
# the source tree's data/hpc-convert, or the installed one (PATH)
convert=$here/hpc-convert
[ -f "$convert" ] || convert=$(command -v hpc-convert)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_convert.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$py" - "$tmp/d.csv" "$rows" "$cols" <<'PY'
import sys
import numpy as np
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
with open(path, "w") as f:
    f.write(",".join(f"c{j}" for j in range(cols)) + "\n")
    for r in range(0, rows, 100000):
        np.savetxt(f, rng.standard_normal((min(100000, rows - r), cols)), delimiter=",", fmt="%.17g")
PY
bytes=$(stat -c %s "$tmp/d.csv")
start=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$tmp/rss" "$py" "$convert" "$tmp/d.csv" --out "$tmp/d.h5"
end=$(date +%s.%N)
awk -v b="$bytes" -v r="$rows" -v s="$start" -v e="$end" -v rss="$(cat "$tmp/rss")" 'BEGIN {
    t = e - s; printf "hpc-convert: %d rows, %.0f MB of CSV in %.2f s: %.1f MB/s, %.0f rows/s, peak RSS %.0f MiB\n",
    r, b / 1e6, t, b / 1e6 / t, r / t, rss / 1024 }'
