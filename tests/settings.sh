#!/bin/sh
# settings.sh - one table of HPC_* settings (libhpc/settings.c), issue 20.2:
#  - the README's table is hpc-info --settings --markdown, line for line
#    (docs/settings-table.sh rewrites it), and every HPC_* name the public
#    headers' environment lists and the batch scripts read is in the table;
#  - hpc-info --settings shows the value in effect and where it came from;
#  - a name that is not a setting (HPC_TIMEUOT) is one warning naming the
#    nearest setting, from rank 0 only, and the run goes on (exit 0): in a
#    program and in an unmodified MPI program under libhpc-mpi.so;
#  - an invalid value: a program refuses it (one line, exit 2: app_kit.sh
#    has the forms); the drop-in warns once and uses the default.
info=$top_builddir/apps/info/hpc-info
lib=$top_builddir/libhpc/mpi/.libs/libhpc-mpi.so
tmp=${TMPDIR:-/tmp}/hpc_settings.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && head -5 "$tmp/err"; exit 1; }
export LD_LIBRARY_PATH=$top_builddir/libhpc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# the README's table
"$info" --settings --markdown >"$tmp/md" || fail "hpc-info --settings --markdown"
sed -n '/<!-- settings:begin/,/<!-- settings:end/p' "$top_srcdir/README.md" | sed '1d;$d' >"$tmp/readme"
[ -s "$tmp/readme" ] || fail "README.md has no settings block"
diff "$tmp/readme" "$tmp/md" >"$tmp/diff" || { cat "$tmp/diff"; fail "README's settings table differs from hpc-info --settings --markdown (run docs/settings-table.sh)"; }
echo "ok: README's table is the settings table ($(($(wc -l <"$tmp/md") - 2)) rows)"

# the names the headers and batch scripts use are all settings
"$info" --settings --json | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' >"$tmp/names"
# (HPC_COLL_<OP> stands for the collectives' rows)
sed -n '/Environment:/,/\*\//p' "$top_srcdir/libhpc/hpc_coll.h" | grep -o 'HPC_[A-Z_]*[A-Z]' | grep -vx HPC_COLL >"$tmp/used"
grep -ho '\${\?HPC_[A-Z_]*[A-Z]' "$top_srcdir"/batch/*.sh | tr -d '${' >>"$tmp/used"
for n in $(sort -u "$tmp/used"); do
    grep -qx "$n" "$tmp/names" || fail "$n is used but not in the settings table"
done
echo "ok: $(sort -u "$tmp/used" | wc -l) names used in hpc_coll.h and batch/ are settings"

# the value in effect and where it came from
HPC_COLL_SEGMENT=64K "$info" --settings >"$tmp/out" 2>"$tmp/err" || fail "hpc-info --settings"
grep -q '^HPC_COLL_SEGMENT  *64K  *environment ' "$tmp/out" || fail "HPC_COLL_SEGMENT=64K not shown as from the environment"
grep -q '^HPC_COLL_POOL_MAX  *256M  *default ' "$tmp/out" || fail "HPC_COLL_POOL_MAX's default not shown"
echo "ok: --settings: $(grep '^HPC_COLL_SEGMENT' "$tmp/out" | tr -s ' ' | cut -c1-40)"

# a typo: one warning with the nearest name, the run goes on
HPC_TIMEUOT=5 $MPIEXEC_WRAP -n 2 "$info" >"$tmp/out" 2>"$tmp/err" || fail "hpc-info with HPC_TIMEUOT: exit $?"
[ "$(grep -c . "$tmp/err")" = 1 ] && grep -q 'HPC_TIMEUOT is not a setting of hpckit: did you mean HPC_TIMEOUT?' "$tmp/err" ||
    fail "HPC_TIMEUOT: expected one warning naming HPC_TIMEOUT"
echo "ok: program: $(cat "$tmp/err")"
# one rule for every unknown name, HPC_COLL_* included (once: refused,
# exit 2): a warning with the nearest name; an invalid value is refused
for typo in HPC_COLL_ALLREDUC=ring:HPC_COLL_ALLREDUCE HPC_COLL_SEGMENTT=8K:HPC_COLL_SEGMENT; do
    env "${typo%:*}" $MPIEXEC_WRAP -n 2 "$info" >"$tmp/out" 2>"$tmp/err" || fail "hpc-info with ${typo%:*}: exit $?"
    [ "$(grep -c . "$tmp/err")" = 1 ] && grep -q "${typo%%=*} is not a setting of hpckit: did you mean ${typo#*:}?" "$tmp/err" ||
        fail "${typo%:*}: expected one warning naming ${typo#*:}"
    echo "ok: program: $(cat "$tmp/err")"
done
HPC_COLL_ALLREDUCE=rign "$info" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && [ "$(grep -c . "$tmp/err")" = 1 ] || fail "HPC_COLL_ALLREDUCE=rign: not refused with one line, exit 2"

# the drop-in: unknown names and invalid values warn once (rank 0)
prog=$top_builddir/tests/pmpi_known
HPC_TIMEUOT=5 HPC_COLL_SEGMENT=huge LD_PRELOAD=$lib $MPIEXEC_WRAP -n 2 "$prog" >"$tmp/out" 2>"$tmp/err" ||
    fail "pmpi_known under libhpc-mpi.so with bad settings: exit $?"
[ "$(grep -c 'did you mean HPC_TIMEOUT' "$tmp/err")" = 1 ] || fail "drop-in: HPC_TIMEUOT not warned of once"
[ "$(grep -c "HPC_COLL_SEGMENT='huge': expected a size.*using the default" "$tmp/err")" = 1 ] ||
    fail "drop-in: HPC_COLL_SEGMENT=huge not warned of once"
echo "ok: drop-in: $(grep -c warning "$tmp/err") warnings, from one rank"
