#!/bin/sh
# embed.sh SCHEMA.json... - the schemas as C strings (libhpc's
# schema_texts.c): every program checks its inputs against the very text
# installed under share/hpckit/data/schemas.  The kind is the file's name.
set -eu
echo "/* made by data/embed.sh from data/schemas/KIND.json: do not edit */"
echo '#include "config.h"'
echo '#include "app/app_h5_internal.h"'
echo "const app_schema_text_t app_schema_texts[] = {"
n=0
for f in "$@"; do
    kind=$(basename "$f" .json)
    printf '    {"%s",\n' "$kind"
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/     "/' -e 's/$/\\n"/' "$f"
    printf '    },\n'
    n=$((n + 1))
done
echo "};"
echo "const size_t app_schema_ntexts = $n;"
