#!/bin/sh
# device_pack.sh - tests/device-pack.sh and tests/device-check.sh on this
# machine: the pack of this build (libraries linked, not copied) is
# complete - every program, library, module and test finds its libraries
# from it - and the check runs every step as far as this machine allows:
# without a GPU, every device request refuses with its one line or skips,
# nothing fails, and the check ends with 77 ("no GPU") after its table;
# with a GPU, it must pass.
. "$top_srcdir/tests/testlib.sh" devpack
sh "$top_srcdir/tests/device-pack.sh" --link "$top_builddir" "$T/pack" > "$T/pack.out" 2>&1 ||
    { cat "$T/pack.out"; fail "device-pack.sh"; }
grep -q "^device-pack.sh: $T/pack: the build" "$T/pack.out" || { cat "$T/pack.out"; fail "device-pack.sh's summary"; }
[ -x "$T/pack/build/apps/info/hpc-info" ] && [ -f "$T/pack/src/tests/testenv.sh" ] && [ -f "$T/pack/pack.env" ] ||
    fail "the pack lacks the build, the sources or pack.env"
# a second pack into the same folder is refused (never mixed)
sh "$top_srcdir/tests/device-pack.sh" --link "$top_builddir" "$T/pack" > /dev/null 2>&1
[ $? = 2 ] || fail "device-pack.sh into a full folder: not refused with exit 2"
sh "$T/pack/device-check.sh" "$T/pack" > "$T/check.out" 2>&1
rc=$?
sed -n '/^check /,$p' "$T/check.out"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
grep -q "^libraries found (ldd) *pass" "$T/check.out" || fail "the pack is incomplete"
grep -q "^hpc-info *pass" "$T/check.out" || fail "hpc-info does not run from the pack"
if [ "$ngpu" -ge 1 ]; then
    [ $rc = 0 ] || fail "device-check.sh on a machine with $ngpu GPU(s): exit $rc"
else
    [ $rc = 77 ] || fail "device-check.sh without a GPU: exit $rc, want 77"
    grep -q ' FAIL ' "$T/check.out" && fail "a row failed without a GPU"
    for r in "hpc-info --selftest --device np2" "hpc-collbench --mem cuda np1" "hpc-odegen cuda = cpu" \
             "hpc-matmul cuda (distributed, 2 ranks)" "hpc-train cuda = cpu (100 steps)"; do
        grep -q "^$r *no-GPU *.*: --\(device\|mem\)" "$T/check.out" || fail "row '$r' did not refuse its device request"
    done
fi
echo "device_pack.sh: all checks passed"
