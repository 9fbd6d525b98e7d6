#!/bin/sh
# odegen_cuda.sh - --device cuda against the CPU: the same statistics and
# values within 1e-12 relative (the kernel is the CPU engine with one lane,
# compiled without FMA contraction; only CUDA's pow() may round apart).
# Skips (77) without a GPU or without CUDA in this build; with both, a
# failing --device cuda run is a failure, not a skip.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
[ "${HAVE_CUDA_BUILD:-no}" = yes ] || { echo "SKIP: built without CUDA"; exit 77; }
odegen 1 -q --device cuda -n 8 --out "$T/probe.h5" 2> "$T/err" || fail "--device cuda: $(cat "$T/err")"
for case in "classic:-n 20000" "lorenz:-s lorenz -n 3000 --rtol 1e-6" \
            "kuramoto:-s kuramoto -d 8 -n 2000" "fail:-n 500 -d 2 --x0-low -6 --x0-high 1 --t1 1"; do
    name=${case%%:*} args=${case#*:}
    odegen 1 --out "$T/$name.cpu.h5" $args || fail "$name cpu"
    odegen 1 --device cuda --out "$T/$name.gpu.h5" $args || fail "$name cuda"
    for d in /t /x0 /stats/nsteps /stats/nfev /stats/nrejected /stats/status; do
        "$H5DIFF" -q "$T/$name.cpu.h5" "$T/$name.gpu.h5" $d $d || fail "$name: $d differs"
    done
    "$H5DIFF" -p 1e-12 "$T/$name.cpu.h5" "$T/$name.gpu.h5" /y /y > "$T/diff" ||
        { head "$T/diff"; fail "$name: /y differs by more than 1e-12 relative"; }
done
echo "odegen_cuda: GPU results equal the CPU's"
