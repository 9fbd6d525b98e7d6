#!/bin/sh
# conventions.sh - one error convention (docs/architecture.md, "Errors"):
# a function that fails returns a negative HPC_ERR_* code with the cause
# recorded (HPC_ERR; callers print hpc_last_cause()), never through a
# second "char *err, size_t len" buffer.  Checks every C file, header and
# CUDA file of libhpc/ and apps/, with declarations that wrap over lines
# joined; then that it catches one planted in a copy, so it cannot pass by
# seeing nothing.
S=${top_srcdir:-.}
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/conventions-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# FILE...: "FILE: char *err, size_t len" for each such parameter pair
scan() {
    for f in "$@"; do
        tr '\n\t' '  ' < "$f" | tr -s ' ' |
            grep -o 'char \*err[a-z_]*, *\(size_t\|unsigned long\|int\) [a-z_]*' | sed "s|^|$f: |"
    done
}

find "$S/libhpc" "$S/apps" \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort > "$T/files"
n=$(wc -l < "$T/files")
[ "$n" -gt 100 ] || fail "only $n sources under $S/libhpc and $S/apps"
# shellcheck disable=SC2046
bad=$(scan $(cat "$T/files"))
[ -z "$bad" ] || fail "a second error convention is back (return HPC_ERR(code, \"...\") instead):
$bad"

# a prototype split over two lines, as long ones are
cp "$S/libhpc/hpc_app.h" "$T/planted.h"
printf 'int hpc_planted(const char *value, char *err,\n                size_t len);\n' >> "$T/planted.h"
[ "$(scan "$T/planted.h" | wc -l)" = 1 ] || fail "the check misses a planted 'char *err, size_t len'"
echo "conventions.sh: $n files of libhpc/ and apps/, no char *err, size_t len"
