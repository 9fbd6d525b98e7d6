#!/bin/sh
# odegen_shards.sh - --shard I/N and --join N by hand: three shards with
# the same --out (on 1, 3 and 2 ranks) write three files of their own,
# named as --join looks for them; joined into one file of virtual
# datasets equal, dataset by dataset, to one big run (also after moving
# the folder); --shard 5/3 is refused; a missing, unfinished or foreign
# shard is one line and exit 1.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
ARGS="-n 700 --nt 11 --seed 8 -s lorenz"
odegen 2 -q $ARGS --out "$T/one.h5" || fail "one run"
mkdir "$T/sh"
odegen 1 -q $ARGS --shard 0/3 --out "$T/sh/ode.h5" || fail "shard 0"
odegen 3 -q $ARGS --shard 1/3 --out "$T/sh/ode.h5" || fail "shard 1"
odegen 2 -q $ARGS --shard 2/3 --out "$T/sh/ode.h5" || fail "shard 2"
[ "$(ls "$T/sh")" = "ode-shard0000-of0003.h5
ode-shard0001-of0003.h5
ode-shard0002-of0003.h5" ] || { ls -l "$T/sh"; fail "the shards did not write three files of their own"; }
odegen 2 --shard 5/3 $ARGS --out "$T/sh/ode.h5" > /dev/null 2> "$T/stderr"
one_line_error $? 2 "--shard 5/3" hpc-odegen
[ "$(ls "$T/sh" | wc -l)" = 3 ] || fail "--shard 5/3 wrote a file"
odegen 2 --join 3 --out "$T/sh/ode.h5" > "$T/out" || fail "join"
# moved as a folder: the virtual datasets name their shards relative to it
mv "$T/sh" "$T/moved"
# every dataset but the done flags (a joined file is complete by construction)
for d in /t /x0 /y /traj /component /stats/nsteps /stats/nfev /stats/nrejected /stats/status; do
    "$H5DIFF" -q "$T/one.h5" "$T/moved/ode.h5" $d $d || fail "joined $d differs from one run"
done
echo "ok: $(cat "$T/out")"
if [ -n "$PYTHON_SCI" ]; then
    (cd / && "$PYTHON_SCI" - "$T/moved/ode.h5" "$T/one.h5" <<'EOF2') || fail "h5py does not read the joined /y as one"
import sys, h5py, numpy as np
j, o = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert j["y"].is_virtual and j["y"].shape == o["y"].shape, j["y"].shape
assert np.array_equal(j["y"][...], o["y"][...], equal_nan=True)
assert int(j.attrs["n"]) == 700 and int(j.attrs["joined_shards"]) == 3
print("h5py: joined /y", j["y"].shape, "equals one run")
EOF2
fi

expect_join() {   # expect_join PATTERN: --join 3 into $T/moved fails with one line
    odegen 2 --join 3 --force --out "$T/moved/ode.h5" > /dev/null 2> "$T/err" && fail "join succeeded: $1"
    [ "$(grep -c . "$T/err")" = 1 ] && grep -q "$1" "$T/err" || { cat "$T/err"; fail "join: not one line with '$1'"; }
    echo "ok: $(cat "$T/err")"
}
mv "$T/moved/ode-shard0001-of0003.h5" "$T/moved/ode-shard0001-of0003.h5.partial"
expect_join "shard 1 of 3 is not complete"
rm "$T/moved/ode-shard0001-of0003.h5.partial"
expect_join "shard 1 of 3 is missing"
odegen 1 -q $ARGS --rtol 1e-4 --shard 1/3 --out "$T/moved/ode.h5" || fail "foreign shard"
expect_join "other options"
echo "odegen_shards: shards join to one run's data"
