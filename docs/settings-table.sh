#!/bin/sh
# settings-table.sh BUILD - rewrite README.md's settings table from the
# settings table itself (BUILD/apps/info/hpc-info --settings --markdown);
# tests/settings.sh fails where they differ.
set -eu
build=${1:?usage: docs/settings-table.sh BUILD}
top=$(cd "$(dirname "$0")/.." && pwd)
tab=$(mktemp)
trap 'rm -f "$tab" "$tab.new"' EXIT
LD_LIBRARY_PATH=$build/libhpc/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$build/apps/info/hpc-info" --settings --markdown >"$tab"
awk -v tab="$tab" '
    /<!-- settings:end/ { skip = 0 }
    !skip { print }
    /<!-- settings:begin/ { while ((getline l < tab) > 0) print l; skip = 1 }
' "$top/README.md" >"$tab.new"
mv "$tab.new" "$top/README.md"
