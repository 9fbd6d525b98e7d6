#!/bin/sh
# conventions.sh - one error convention (docs/architecture.md, "Errors"):
# a function that fails returns a negative HPC_ERR_* code with the cause
# recorded (HPC_ERR; callers print hpc_last_cause()), never through a
# second "char *err, size_t len" or "char *why, size_t len" buffer.
# Checks every C file, header and CUDA file of libhpc/ and apps/, with
# declarations that wrap over lines joined, except hpc_dl.h and dl.c (the
# one exception: a header free of MPI and hpc.h, for CUDA sources); then
# that it catches each form planted in a copy, so it cannot pass by
# seeing nothing.
S=${top_srcdir:-.}
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/conventions-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# FILE...: "FILE: char *err, size_t len" for each such parameter pair
# (err or why, any suffix; a "const char *why" is a message passed in)
scan() {
    for f in "$@"; do
        tr '\n\t' '  ' < "$f" | tr -s ' ' |
            grep -o '\([a-z_]* \)\{0,1\}char \*\(err\|why\)[a-z_]*, *\(size_t\|unsigned long\|int\) [a-z_]*' |
            grep -v '^const ' | sed "s|^ *||; s|^|$f: |"
    done
}

find "$S/libhpc" "$S/apps" \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) |
    grep -v -e '/libhpc/hpc_dl\.h$' -e '/libhpc/dl\.c$' | sort > "$T/files"
n=$(wc -l < "$T/files")
[ "$n" -gt 100 ] || fail "only $n sources under $S/libhpc and $S/apps"
# shellcheck disable=SC2046
bad=$(scan $(cat "$T/files"))
[ -z "$bad" ] || fail "a second error convention is back (return HPC_ERR(code, \"...\") instead):
$bad"

# each form, a prototype split over two lines as long ones are; and a
# message passed in, which is not one
i=0
for pair in 'char *err,\n                size_t len' 'char *why,\n                size_t len' \
            'char *why, unsigned long len' 'char *whybuf, size_t whylen'; do
    i=$((i + 1))
    cp "$S/libhpc/hpc_app.h" "$T/planted$i.h"
    printf "int hpc_planted(const char *value, $pair);\n" >> "$T/planted$i.h"
    [ "$(scan "$T/planted$i.h" | wc -l)" = 1 ] || fail "the check misses a planted '$pair'"
done
cp "$S/libhpc/hpc_app.h" "$T/message.h"
printf 'void hpc_planted(const char *why, size_t len);\n' >> "$T/message.h"
[ -z "$(scan "$T/message.h")" ] || fail "the check takes a message passed in (const char *why) for a buffer"
# the exception is hpc_dl.h's own: it would be caught anywhere else
[ "$(scan "$S/libhpc/hpc_dl.h" | wc -l)" -ge 1 ] || fail "the check misses hpc_dl.h's 'char *why, unsigned long len'"
echo "conventions.sh: $n files of libhpc/ and apps/, no char *err or char *why, size_t len (hpc_dl.h, dl.c excepted)"
