#!/bin/sh
# blas_kernel.sh - the OpenBLAS kernel hpckit's programs run (issue 29):
#  - where OpenBLAS chose a kernel narrower than the CPU allows, a program
#    restarts itself once with the widest the CPU runs (the one hpc-info's
#    CPU line names), at 1 and 2 ranks: hpc-info says who chose it, the
#    summary lines of hpc-matmul and hpc-train name it, hpc-matmul's product
#    verifies, and hpc-train's losses are bit for bit those of the same run
#    with that kernel set by hand (the restart changes nothing else: argv,
#    the run);
#  - a user's OPENBLAS_CORETYPE wins, and hpc-info warns with the fix;
#  - HPC_BLAS_KERNEL=off keeps OpenBLAS's choice, and the warning names it;
#    a bad value is one line, exit 2;
#  - the restarted copy leaves no hpckit variable for its children.
# OpenBLAS's own choice is planted: the test hook HPC_BLAS_TEST_OWN=1 takes
# OPENBLAS_CORETYPE=Prescott for OpenBLAS's own (what OpenBLAS 0.3.21
# chooses on the Xeons it does not know), so the test runs on any x86-64.
. "$top_srcdir/tests/testlib.sh" blas
INFO=$top_builddir/apps/info/hpc-info
MM=$top_builddir/apps/matmul/hpc-matmul
TRAIN=$top_builddir/apps/train/hpc-train
ODEGEN=$top_builddir/apps/odegen/hpc-odegen
run() {   # run NP PROGRAM ARGS...
    np=$1
    shift
    if [ "$np" = 1 ]; then "$@"; else "$MPIEXEC_WRAP" -n "$np" "$@"; fi
}

env -u OPENBLAS_CORETYPE "$INFO" > "$T/info" 2>&1 || { cat "$T/info"; fail "hpc-info"; }
best=$(sed -n 's/^CPU: .*(OpenBLAS kernel for them: \([A-Za-z0-9]*\))$/\1/p' "$T/info")
grep -q '^BLAS: *OpenBLAS ' "$T/info" || { cat "$T/info"; fail "hpc-info names no OpenBLAS (it links it as the programs do)"; }
case $best in
"" | Prescott) echo "SKIP: no OpenBLAS kernel wider than Prescott for this CPU: $(grep '^CPU' "$T/info")"; exit 77 ;;
esac
echo "this CPU: $(grep '^CPU' "$T/info")"

# OpenBLAS chose Prescott: hpckit restarts with $best
for np in 1 2; do
    HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott run $np "$INFO" > "$T/out" 2>&1 || { cat "$T/out"; fail "hpc-info at $np"; }
    grep -q "^BLAS: .*kernel $best (hpckit's choice for this CPU; OpenBLAS chose Prescott)" "$T/out" ||
        { cat "$T/out"; fail "$np rank(s): hpc-info does not say hpckit chose $best"; }
    grep -q '^warning: .*OpenBLAS runs' "$T/out" && { cat "$T/out"; fail "$np rank(s): a warning after the restart"; }
    HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott run $np "$MM" --gen 96,80,64 --nb 32 --verify > "$T/out" 2>&1 ||
        { cat "$T/out"; fail "hpc-matmul at $np"; }
    grep -q "^hpc-matmul: .*, cpu, BLAS $best), .*verify passed" "$T/out" ||
        { cat "$T/out"; fail "$np rank(s): hpc-matmul's summary does not name $best, or did not verify"; }
done
echo "ok: OpenBLAS's Prescott: hpc-info and hpc-matmul (1 and 2 ranks) restart with $best and say so"

# hpc-train: the restarted run is the run with the kernel set by hand
"$ODEGEN" -q -n 40 --nt 11 --out "$T/ode.h5" || fail "making the data"
targs="--data $T/ode.h5 --layers 11,32,10 --steps 30 --batch 40 --log-every 1"
HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott run 2 "$TRAIN" $targs --out "$T/auto" > "$T/out" 2>&1 ||
    { cat "$T/out"; fail "hpc-train restarted"; }
grep -q "^hpc-train: .* samples/s on 2 ranks (cpu, BLAS $best);" "$T/out" ||
    { cat "$T/out"; fail "hpc-train's summary does not name $best"; }
OPENBLAS_CORETYPE=$best run 2 "$TRAIN" $targs --out "$T/hand" > "$T/out" 2>&1 || { cat "$T/out"; fail "hpc-train, $best by hand"; }
for r in auto hand; do awk -F, 'NR > 1 { print $1, $4 }' "$T/$r/metrics.csv" > "$T/$r.loss"; done
[ "$(grep -c . "$T/auto.loss")" = 30 ] && cmp -s "$T/auto.loss" "$T/hand.loss" ||
    { diff "$T/auto.loss" "$T/hand.loss" | head; fail "hpc-train restarted differs from $best set by hand"; }
echo "ok: hpc-train restarted with $best: the same 30 losses, bit for bit, as with OPENBLAS_CORETYPE=$best"

# the user's OPENBLAS_CORETYPE wins; hpc-info warns with the fix
OPENBLAS_CORETYPE=Prescott "$MM" --gen 64,64,64 --verify > "$T/out" 2>&1 || { cat "$T/out"; fail "hpc-matmul, Prescott"; }
grep -q "cpu, BLAS Prescott), .*verify passed" "$T/out" || { cat "$T/out"; fail "the user's Prescott did not win"; }
OPENBLAS_CORETYPE=Prescott "$INFO" > "$T/out" 2>&1
grep -q "^warning: .*OpenBLAS runs its Prescott kernels (SSE3) on a CPU with .*: OPENBLAS_CORETYPE=Prescott is set: unset it (hpckit's programs then choose $best) or set OPENBLAS_CORETYPE=$best$" "$T/out" ||
    { cat "$T/out"; fail "no warning with the fix for the user's Prescott"; }
echo "ok: the user's OPENBLAS_CORETYPE=Prescott wins; hpc-info warns with the fix"

# HPC_BLAS_KERNEL=off: OpenBLAS's choice stays, the warning names the setting
HPC_BLAS_KERNEL=off HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott "$INFO" > "$T/out" 2>&1
grep -q "^BLAS: .*kernel Prescott (OpenBLAS's choice; HPC_BLAS_KERNEL=off)" "$T/out" &&
    grep -q "^warning: .*HPC_BLAS_KERNEL=off is set: unset it (hpckit's programs then choose $best)$" "$T/out" ||
    { cat "$T/out"; fail "HPC_BLAS_KERNEL=off"; }
HPC_BLAS_KERNEL=fast "$MM" --gen 8,8,8 > "$T/out" 2> "$T/stderr"
one_line_error $? 2 "HPC_BLAS_KERNEL=fast" hpc-matmul
grep -q "HPC_BLAS_KERNEL='fast': expected one of auto,off" "$T/stderr" || fail "HPC_BLAS_KERNEL=fast: $(cat "$T/stderr")"
echo "ok: HPC_BLAS_KERNEL=off keeps OpenBLAS's kernel and is named in the warning; a bad value is exit 2"

# started through the dynamic loader (ld.so PROGRAM: /proc/self/exe is the
# loader): no restart, the program runs with its options on OpenBLAS's kernel
# and hpc-info says why (the device check runs hpc-train so: it was refused)
ldso=$(sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p' "$top_builddir/apps/matmul/.libs/hpc-matmul" 2>/dev/null)
[ -n "$ldso" ] || ldso=$(readelf -l "$top_builddir/apps/matmul/.libs/hpc-matmul" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
if [ -x "$ldso" ]; then
    LD_LIBRARY_PATH="$top_builddir/libhpc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott "$ldso" "$top_builddir/apps/matmul/.libs/hpc-matmul" --gen 64,64,64 --verify > "$T/out" 2>&1 ||
        { cat "$T/out"; fail "hpc-matmul through $ldso"; }
    grep -q "cpu, BLAS Prescott), .*verify passed" "$T/out" || { cat "$T/out"; fail "hpc-matmul through $ldso: not OpenBLAS's Prescott"; }
    LD_LIBRARY_PATH="$top_builddir/libhpc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott "$ldso" "$top_builddir/apps/info/.libs/hpc-info" > "$T/out" 2>&1
    grep -q "^BLAS: .*started through the dynamic loader" "$T/out" || { cat "$T/out"; fail "hpc-info through $ldso does not say why"; }
    echo "ok: started through $ldso: no restart, OpenBLAS's kernel, the reason named"
fi

# the restarted copy removes its guard: its children see the user's environment
HPC_BLAS_TEST_OWN=1 OPENBLAS_CORETYPE=Prescott "$INFO" --settings > "$T/out" 2>&1
grep -q '^HPC_BLAS_RESTARTED  *-  *default ' "$T/out" ||
    { grep HPC_BLAS "$T/out"; fail "HPC_BLAS_RESTARTED left in the restarted program's environment"; }
echo "blas_kernel: the programs run the widest kernel the CPU allows, unless told otherwise"
