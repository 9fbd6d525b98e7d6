#!/bin/sh
# symbols.sh - what libhpc exports: in libhpc-core.so and libhpc.so only
# hpc_* symbols (everything else is hidden: -fvisibility=hidden,
# HPC_EXPORT on the public declarations), so internal names can change
# without breaking programs linked to them; and no test hook
# (test_hooks.h, hpc_testing.h, gpu_ops.h's test entry: the tests link
# libhpc's objects instead).  The only exports no installed header
# declares are libhpc-core's private interface to libhpc.so and
# libhpc-h5 (static: its symbols come with the programs), marked
# HPC_PRIVATE in internal.h; libhpc-h5.a's global names are the API's
# only.
B=${top_builddir:-.}/libhpc/.libs
S=${top_srcdir:-.}/libhpc
for l in libhpc-core.so libhpc.so; do
    [ -f "$B/$l" ] || { echo "SKIP: no $B/$l (static build?)"; exit 77; }
done
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
all=$(for l in libhpc-core.so libhpc.so; do nm -D --defined-only "$B/$l" | awk '{print $3}'; done | sort)
bad=$(echo "$all" | grep -v '^hpc_' | grep -v '^$')
[ -z "$bad" ] || fail "libhpc exports non-hpc_ symbols: $bad"
n=$(echo "$all" | grep -c '^hpc_')
[ "$n" -gt 100 ] || fail "only $n hpc_ symbols exported"
dup=$(echo "$all" | uniq -d)
[ -z "$dup" ] || fail "exported by both libraries: $dup"

# the test hooks: every function their headers declare, none exported
hooks=$(sed -n 's/^[a-z].*[ *]\(hpc_[a-z0-9_]*\)(.*/\1/p' "$S/coll/test_hooks.h" "$S/hpc_testing.h" "$S/gpu_ops.h" | sort -u)
nh=$(echo "$hooks" | grep -c .)
[ "$nh" -ge 13 ] || fail "found only $nh test hooks in the headers (the pattern broke?): $hooks"
leak=$(echo "$all" | grep -Fx "$hooks")
[ -z "$leak" ] || fail "test hooks exported: $leak"

# exported but in no installed header: exactly the HPC_PRIVATE ones
public=$(cat "$S"/hpc.h "$S"/hpc_rng.h "$S"/hpc_coll.h "$S"/hpc_h5.h "$S"/hpc_app.h "$S"/hpc_app_h5.h "$S"/hpc_dl.h |
         grep -o 'hpc_[a-z0-9_]*' | sort -u)
private=$(sed -n 's/^HPC_PRIVATE .*[ *]\(hpc_[a-z0-9_]*\)(.*/\1/p' "$S/internal.h" | sort -u)
extra=$(echo "$all" | grep -vFx "$public" | grep -vFx "$private")
[ -z "$extra" ] || fail "exported, but in no installed header and not HPC_PRIVATE: $extra"
np=$(echo "$private" | grep -c .)
for p in $private; do echo "$all" | grep -qx "$p" || fail "HPC_PRIVATE $p is not exported"; done
# libhpc-h5.a: one object whose only global names are the API's (its
# hidden ones made local, libhpc/local.mk): a user program that defines
# check_values or app_json_parse links with it as with a shared library
A=${top_builddir:-.}/libhpc/libhpc-h5.a
[ -f "$A" ] || fail "no $A"
h5=$(nm -g --defined-only "$A" | awk 'NF == 3 {print $3}' | sort)
nh5=$(echo "$h5" | grep -c '^hpc_')
[ "$nh5" -gt 20 ] || fail "libhpc-h5.a: only $nh5 hpc_ names (nm's output changed?)"
bad=$(echo "$h5" | grep -v '^hpc_' | grep -v '^$')
[ -z "$bad" ] || fail "libhpc-h5.a has global names a user's program could clash with:" $bad
extra=$(echo "$h5" | grep -vFx "$public" | grep -vFx "$private")
[ -z "$extra" ] || fail "libhpc-h5.a: global, but in no installed header and not HPC_PRIVATE:" $extra
echo "symbols: libhpc-h5.a: $nh5 global names, all the API's"
echo "symbols: $n exported symbols, all hpc_*; $np private to libhpc.so, no test hook of $nh"
