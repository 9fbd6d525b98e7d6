#!/bin/sh
# gpu.sh - GPU binding seen through hpc-info on 3 ranks with various
# CUDA_VISIBLE_DEVICES lists.  Needs a GPU: skips (77) without one.
info=$top_builddir/apps/info/hpc-info
tmp=${TMPDIR:-/tmp}/hpc_gpu_test.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp"/out "$tmp"/err 2>/dev/null; exit 1; }

# skip only where there is nothing to bind: no device, or a CPU-only build;
# with a device and CUDA, a rank without a GPU index is a failure
ndev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ndev" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
[ "${HAVE_CUDA_BUILD:-no}" = yes ] || { echo "SKIP: built without CUDA"; exit 77; }
"$info" >"$tmp/out" 2>"$tmp/err" || fail "hpc-info"
# a GPU and a build with CUDA: the module must load and see it
grep -q 'CUDA yes' "$tmp/out" || fail "a GPU is listed but libhpc's CUDA module did not load: $(grep '^GPU stack' "$tmp/out")"
"$info" --json >"$tmp/out" 2>"$tmp/err" || fail "hpc-info --json"
grep -q '"index": 0' "$tmp/out" || fail "a GPU is present but hpc-info reports none"

# gpus LIST: the device index each of the 3 ranks reports (one JSON line
# per rank: no Python needed on a GPU machine)
gpus() {
    $MPIEXEC_WRAP -n 3 "$info" --json >"$tmp/out" 2>"$tmp/err" || return 1
    sed -n 's/^ *{"rank": .*"gpu": \(null\|{"index": \([0-9]*\)\).*/\2/p' "$tmp/out" |
        sed 's/^$/none/' | tr '\n' ',' | sed 's/,$//'
}
got=$(CUDA_VISIBLE_DEVICES=0 gpus) || fail "one visible device"
[ "$got" = "0,0,0" ] || fail "CUDA_VISIBLE_DEVICES=0: $got"
grep -q 'share GPU' "$tmp/out" || fail "no shared-GPU warning"
got=$(CUDA_VISIBLE_DEVICES= gpus) || fail "no visible device"
[ "$got" = "none,none,none" ] || fail "CUDA_VISIBLE_DEVICES='': $got"
got=$(HPC_GPU_BIND=none gpus) || fail "HPC_GPU_BIND=none"
[ "$got" = "none,none,none" ] || fail "HPC_GPU_BIND=none: $got"
if [ "$ndev" -ge 2 ]; then
    got=$(CUDA_VISIBLE_DEVICES=1,0 gpus) || fail "two devices"
    [ "$got" = "0,1,0" ] || fail "CUDA_VISIBLE_DEVICES=1,0: $got"
    got=$(HPC_GPU_BIND=list:1 gpus) || fail "list:1"
    [ "$got" = "1,1,1" ] || fail "HPC_GPU_BIND=list:1: $got"
fi
if [ "$ndev" -lt 3 ]; then
    HPC_GPU_BIND=exclusive $MPIEXEC_WRAP -n 3 "$info" >"$tmp/out" 2>"$tmp/err"
    [ $? = 2 ] || fail "exclusive with 3 ranks on $ndev GPUs did not exit 2"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "exclusive: not one line"
fi
echo "gpu.sh: all checks passed"
