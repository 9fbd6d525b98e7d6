#!/bin/sh
# train_siblings.sh - hpc-train's strategies are siblings, checked from the
# object files' symbols (nm): an object of a strategy needs, of what
# hpc-train's objects define, only its own strategy's symbols and those of
# the pieces below the strategies; the pieces below need only each other.
#   dp         strat_dp.c
#   shard      strat_shard.c
#   pipe       pipe.c pipe_run.c pipe_sched.c pipe_stale.c pipe_predict.c
#              timeline.c
#   below      strat_common.c, the gradient synchronisation (dp.c,
#              zero.c) and the building blocks (model, optimisers,
#              devices, data)
# The rest (strategy.c, options.c, loop.c, main.c, ...) sits above and may
# use them all.  The check runs on this build's objects, then on the same
# symbols with one planted need of dp on shard's table: it must fail
# there, naming it, or it could not catch anything.
B=${top_builddir:-.}
S=${top_srcdir:-.}
fail() { echo "FAIL: $*"; exit 1; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/train-siblings.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

group() {
    case $1 in
    strat_dp) echo dp ;;
    strat_shard) echo shard ;;
    pipe|pipe_run|pipe_sched|pipe_stale|pipe_predict|timeline) echo pipe ;;
    strat_common|dp|zero|model|layer|act|loss|lr_schedule|optim|optim_predict|cpu|hold|batch|loader|data|stats)
        echo below ;;
    *) echo above ;;
    esac
}

# "U|D GROUP FILE SYMBOL" of every object of hpc-train's sources
n=0
for src in "$S"/apps/train/*.c; do
    f=$(basename "$src" .c)
    obj=$B/apps/train/hpc_train-$f.o
    [ -f "$obj" ] || fail "$obj is missing (build hpc-train first)"
    g=$(group "$f")
    nm "$obj" | awk -v G="$g" -v F="$f" '
        $1 == "U" { print "U", G, F, $2; next }
        NF == 3 && $2 ~ /^[TDBRC]$/ { print "D", G, F, $3 }'
    n=$((n + 1))
done > "$T/syms"
[ "$n" -ge 30 ] || fail "only $n objects of hpc-train found"

# check FILE: 0, or 1 with a line per need across siblings or upward
check() {
    awk '
    $1 == "D" { def[$4] = $2; file[$4] = $3; next }
    { need[++n] = $0 }
    END {
        bad = 0
        for (i = 1; i <= n; i++) {
            split(need[i], w, " ")
            s = w[4]; g = w[2]
            if (!(s in def) || g == "above" || def[s] == g || def[s] == "below") continue
            printf "%s (%s) needs %s of %s (%s)\n", w[3], g, s, file[s], def[s]
            bad = 1
        }
        exit bad
    }' "$1"
}

check "$T/syms" > "$T/out" || { cat "$T/out"; fail "a strategy uses another, or a piece below uses a strategy"; }
echo "ok: $n objects: the strategies need only themselves and the pieces below"

# planted: dp's strategy needing shard's table
cp "$T/syms" "$T/planted"
echo "U dp strat_dp strategy_shard" >> "$T/planted"
if check "$T/planted" > "$T/out"; then fail "the planted need of dp on shard was not found"; fi
grep -q "strat_dp (dp) needs strategy_shard of strat_shard (shard)" "$T/out" ||
    { cat "$T/out"; fail "the planted need is not named"; }
echo "ok: a planted need of one strategy on another is found: $(cat "$T/out")"
