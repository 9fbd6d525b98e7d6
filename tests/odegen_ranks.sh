#!/bin/sh
# odegen_ranks.sh - the output data is identical, bit for bit, for 1, 2, 3
# and 4 ranks (chunks handed out dynamically, so each rank count splits
# the work differently), for several systems and initial distributions.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
set -e
for case in "classic:-n 700 --chunk 16" \
            "lorenz:-s lorenz -n 150 --chunk 8 --rtol 1e-6 --x0-normal 0,10 --seed 3" \
            "kuramoto:-s kuramoto -d 5 -n 90 --chunk 7 --nt 11"; do
    name=${case%%:*} args=${case#*:}
    for np in 1 2 3 4; do
        # shellcheck disable=SC2086
        odegen $np -q --out "$T/$name.np$np.h5" $args
    done
    for np in 2 3 4; do
        same_data "$T/$name.np1.h5" "$T/$name.np$np.h5" || fail "$name: $np ranks differ from 1"
        [ "$(stable_attrs "$T/$name.np1.h5")" = "$(stable_attrs "$T/$name.np$np.h5")" ] ||
            fail "$name: attributes differ with $np ranks"
    done
done
echo "odegen_ranks: 1-4 ranks give identical data"
