#!/bin/sh
# readbench.sh - reading a joined job array against a plain file: the
# figures for docs/odegen.md ("Job arrays").  Makes one hpc-odegen file
# and the same data as SHARDS shards joined with --join, then reads /y's
# rows (apps/odegen/readbench) as hpc-train reads them (shuffled pairs of
# grid rows) and as a preloading reader does (each rank a block), at 1 and
# NP ranks:
#   plain  file through MPI-IO      (what every plain input uses)
#   plain  file through sec2        (the serial driver alone)
#   joined file through sec2        (what hpc_h5_open picks for it)
#
#   apps/odegen/readbench.sh [BUILD_DIR]
#
# Environment: N (trajectories, default 200000: 1.6 GB with the classic
# example's 101 x 10 grid), SHARDS (default 8), NP (default 2), REPEAT
# (runs per figure, median, default 3), SAMPLES (shuffled samples per run,
# default 1000000), MPIEXEC (default: the launcher configure chose),
# TMPDIR (where the files go; deleted at the end), DROP=1 (as root: drop
# the page cache before every run, so the disk is measured, not memory;
# otherwise make N large enough that the files exceed memory, or read the
# figures as cached reads).
set -e
build=${1:-.}
odegen=$build/apps/odegen/hpc-odegen
bench=$build/apps/odegen/readbench
[ -x "$odegen" ] && [ -x "$bench" ] || { echo "readbench.sh: no $odegen or $bench (pass the build folder; make)" >&2; exit 2; }
N=${N:-200000}
SHARDS=${SHARDS:-8}
NP=${NP:-2}
REPEAT=${REPEAT:-3}
SAMPLES=${SAMPLES:-1000000}
MPIEXEC=${MPIEXEC:-$build/tests/mpiexec-wrap -n}
dir=$(mktemp -d "${TMPDIR:-/tmp}/odegen-readbench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "readbench.sh: N=$N, $SHARDS shards, $REPEAT runs each, median; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
$MPIEXEC "$NP" "$odegen" -q -n "$N" --out "$dir/plain.h5"
i=0
while [ $i -lt "$SHARDS" ]; do
    $MPIEXEC "$NP" "$odegen" -q -n "$N" --shard "$i/$SHARDS" --out "$dir/joined.h5"
    i=$((i + 1))
done
"$odegen" -q --join "$SHARDS" --out "$dir/joined.h5"
echo "files: plain $(du -h "$dir/plain.h5" | cut -f1), joined over $SHARDS shards of $(du -ch "$dir"/joined-shard* | tail -1 | cut -f1)"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
measure() {   # measure FILE DRIVER MODE NP: median MB/s
    : > "$dir/runs"
    for r in $(seq "$REPEAT"); do
        if [ "${DROP:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
        $MPIEXEC "$4" "$bench" "$1" "$2" "$3" "$SAMPLES" | awk '{ print $6 }' >> "$dir/runs"
    done
    median < "$dir/runs"
}
printf '%-34s %10s %10s\n' "MB/s (median)" "1 rank" "$NP ranks"
for mode in shuffled block; do
    for c in "plain mpio" "plain sec2" "joined auto"; do
        set -- $c
        printf '%-34s %10s %10s\n' "$mode: $1 file, $([ "$2" = auto ] && echo "sec2 (auto)" || echo "$2")" \
            "$(measure "$dir/$1.h5" "$2" $mode 1)" "$(measure "$dir/$1.h5" "$2" $mode "$NP")"
    done
done
