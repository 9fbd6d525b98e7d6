#!/bin/sh
# embed.sh OUT.c FILE... - the texts of FILEs as C strings, for a program
# that must carry sources of its own (hpc-odegen compiles its engine with
# a user's system at run time): OUT.c defines
#   const ode_text_t ode_texts[] = {{"NAME", "TEXT"}, ...};  const int ode_ntexts;
# with NAME the file's base name.  Backslashes, quotes and question marks
# (trigraphs) are escaped; every line keeps its newline.
set -e
out=$1
shift
{
    echo "/* $(basename "$out") - made by build-aux/embed.sh from the files named below: do not edit */"
    echo '#include "ode_texts.h"'
    echo 'const ode_text_t ode_texts[] = {'
    for f in "$@"; do
        printf '    {"%s",\n' "$(basename "$f")"
        sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/     "/' -e 's/$/\\n"/' "$f"
        echo '    },'
    done
    echo '};'
    echo 'const int ode_ntexts = (int)(sizeof ode_texts / sizeof ode_texts[0]);'
} > "$out.tmp"
mv "$out.tmp" "$out"
