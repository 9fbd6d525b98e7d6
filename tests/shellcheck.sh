#!/bin/sh
# shellcheck.sh - every script `make install` puts under
# PREFIX/share/hpckit/batch (the Slurm scripts and common.sh, filled in as
# installed) passes shellcheck, following common.sh where they source it;
# so do the scripts of batch/ that are run from the source tree (demo.sh,
# deps.sh).  Skips (77) without shellcheck (Debian's package; batch/deps.sh
# installs it).
. "${top_srcdir:-.}/tests/testlib.sh" shellcheck
command -v shellcheck > /dev/null 2>&1 || { echo "SKIP: no shellcheck (apt-get install shellcheck)"; exit 77; }
make -s -C "$top_builddir" install-data-local DESTDIR="$T/inst" > "$T/log" 2>&1 ||
    { cat "$T/log"; fail "installing the batch scripts"; }
dir=$(find "$T/inst" -type f -name common.sh -exec dirname {} \; | head -n 1)
[ -n "$dir" ] || fail "no common.sh installed"
n=0
for f in "$dir"/*.sh "$top_srcdir/batch/demo.sh" "$top_srcdir/batch/deps.sh"; do
    shellcheck -x "$f" > "$T/out" 2>&1 || { cat "$T/out"; fail "shellcheck $f"; }
    n=$((n + 1))
done
[ "$n" -ge 9 ] || fail "only $n scripts checked"
echo "shellcheck: $n scripts clean ($(ls "$dir" | tr '\n' ' '))"
