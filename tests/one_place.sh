#!/bin/sh
# one_place.sh - what is defined once stays defined once (issue 35):
#  - a collective's wrappers come from its row of libhpc/coll/colls.h:
#    no hand-written hpc_NAME/hpc_iNAME/hpc_iNAME_stream in libhpc, no
#    hand-written MPI_Xxx/MPI_Ixxx of the drop-in;
#  - the list of programs is Makefile.am's (bin_PROGRAMS, programs.list):
#    no line of the build files, the docs' scripts or the tests names four
#    or more of them by hand.
# Then that each check catches a copy planted in a scratch tree, so it
# cannot pass by seeing nothing.
S=${top_srcdir:-.}
B=${top_builddir:-.}
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/one_place-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# the table's rows: name and MPI's two calls
sed -n 's/^ *X(\([a-z_]*\), *[A-Z_]*, *[A-Z_]*, *[A-Z_]*, *[A-Z_]*, *[A-Z_]*, *[^,]*, *\([A-Za-z_]*\), *\([A-Za-z_]*\),.*/\1 \2 \3/p' \
    "$S/libhpc/coll/colls.h" > "$T/rows"
[ "$(wc -l < "$T/rows")" -ge 9 ] || fail "read only $(wc -l < "$T/rows") rows of colls.h"
re=$(awk '{n = n sep $1; m = m sep $2 "|" $3; sep = "|"} END {printf "^int (hpc_i?(%s)(_stream)?|MPI_(%s)) *\\(", n, m}' "$T/rows")

# DIR: hand-written wrappers under DIR
wrappers() { grep -rnE "$re" "$1" --include='*.c'; }
# FILES...: lines that name four or more of the programs
lists() {
    awk -v P="$(cut -d' ' -f1 "$B/programs.list" | tr '\n' ' ')" '
        BEGIN { n = split(P, prog, " ") }
        { k = 0; for (i = 1; i <= n; i++) if (index($0, prog[i])) k++
          if (k >= 4) print FILENAME ":" FNR ": " $0 }' "$@"
}
[ "$(wc -l < "$B/programs.list")" -ge 6 ] || fail "programs.list names too few programs"
# (this test itself aside: it plants such lines)
files() { ls "$1"/Makefile.am "$1"/*/local.mk "$1"/*/*/local.mk "$1"/tests/*.mk "$1"/tests/*.sh "$1"/docs/*.sh "$1"/batch/*.sh 2>/dev/null | grep -v "/tests/one_place\.sh$"; }

bad=$(wrappers "$S/libhpc")
[ -z "$bad" ] || fail "a collective's wrapper written by hand (add a row to libhpc/coll/colls.h instead):
$bad"
bad=$(lists $(files "$S"))
[ -z "$bad" ] || fail "the programs listed by hand (read programs.list, made from bin_PROGRAMS, instead):
$bad"
echo "ok: $(wc -l < "$T/rows") collectives from colls.h, $(wc -l < "$B/programs.list") programs from programs.list, no copies"

# planted copies must be caught
mkdir -p "$T/s/libhpc/coll" "$T/s/tests" "$T/s/docs"
printf 'int hpc_iscatter(const void *s)\n{\n}\nint MPI_Ireduce_scatter_block(const void *s)\n' > "$T/s/libhpc/coll/api.c"
[ "$(wrappers "$T/s/libhpc" | wc -l)" = 2 ] || fail "planted wrappers not caught: $(wrappers "$T/s/libhpc")"
echo 'for p in hpc-info hpc-collbench hpc-odegen hpc-matmul hpc-train; do' > "$T/s/tests/x.sh"
echo 'HPC_MANS = apps/info/hpc-info.1 apps/odegen/hpc-odegen.1 apps/matmul/hpc-matmul.1 apps/train/hpc-train.1' > "$T/s/Makefile.am"
[ "$(lists $(files "$T/s") | wc -l)" = 2 ] || fail "planted lists not caught: $(lists $(files "$T/s"))"
echo "ok: planted copies caught"
