#!/bin/sh
# schema-tables.sh [--check] HPC-H5CHECK DOC.md... - the guides' tables of
# the file kinds, made from the schemas: every block
#
#   <!-- schema KIND: made from data/schemas/KIND.json by data/schema-tables.sh -->
#   ...
#   <!-- /schema -->
#
# is replaced by `hpc-h5check --markdown KIND`.  With --check nothing is
# written: a guide whose block differs is a diff and exit 1
# (tests/data_schemas.sh), so prose and schema cannot drift.
set -eu
check=
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
[ $# -ge 2 ] || { echo "usage: schema-tables.sh [--check] HPC-H5CHECK DOC.md..." >&2; exit 2; }
h5check=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/schema-tables.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
for doc in "$@"; do
    grep -q '^<!-- schema ' "$doc" || continue
    for kind in $(sed -n 's/^<!-- schema \([a-z-]*\):.*/\1/p' "$doc" | sort -u); do
        "$h5check" --markdown "$kind" > "$tmp/$kind.md" || { echo "$doc: no kind '$kind'" >&2; exit 1; }
    done
    awk -v dir="$tmp" '
        /^<!-- schema [a-z-]*:/ { print; kind = $3; sub(/:$/, "", kind); f = dir "/" kind ".md"
                                  while ((getline line < f) > 0) print line; close(f); skip = 1; next }
        /^<!-- \/schema -->/    { skip = 0 }
        !skip' "$doc" > "$tmp/new.md"
    if [ -n "$check" ]; then
        diff -u "$doc" "$tmp/new.md" >&2 ||
            { echo "$doc: its tables are not the schemas' (run data/schema-tables.sh on it)" >&2; status=1; }
    elif ! cmp -s "$doc" "$tmp/new.md"; then
        cat "$tmp/new.md" > "$doc"
        echo "$doc: tables made from the schemas"
    fi
done
exit $status
