#!/bin/sh
# data_schemas.sh - the guides' tables of the file kinds are what the
# schemas (data/schemas/KIND.json) say: data/schema-tables.sh --check
# regenerates each marked table with hpc-h5check --markdown and fails
# where a guide differs; every kind's schema parses (--schema, --markdown)
# and is the installed file's text.
set -eu
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
H5CHECK=$top_builddir/apps/h5check/hpc-h5check
for kind in $("$H5CHECK" --list-kinds | cut -d' ' -f1); do
    "$H5CHECK" --schema "$kind" | cmp -s - "$top_srcdir/data/schemas/$kind.json" ||
        { echo "FAIL: $kind: the built-in schema is not data/schemas/$kind.json" >&2; exit 1; }
    "$H5CHECK" --markdown "$kind" > /dev/null || { echo "FAIL: $kind: no tables" >&2; exit 1; }
done
n=$(ls "$top_srcdir"/data/schemas/*.json | wc -l)
[ "$n" = "$("$H5CHECK" --list-kinds | wc -l)" ] || { echo "FAIL: $n schema files, not each built in" >&2; exit 1; }
sh "$top_srcdir/data/schema-tables.sh" --check "$H5CHECK" "$top_srcdir"/docs/*.md
echo "data_schemas: $n schemas, the guides' tables are theirs"
