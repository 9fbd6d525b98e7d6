#!/bin/sh
# man3.sh VERSION OUTDIR HEADER... - section-3 man pages of libhpc's public
# C API, made from the headers' own comments at build time, so that they
# cannot drift from the code:
#   - a page per function (hpc_allreduce.3): the comment block right above
#     its declaration, which a group of declarations without a blank line
#     or other code between them shares (hpc_allreduce and hpc_iallreduce),
#     the group's declarations as the synopsis;
#   - a page per header (hpc_coll.h.3): the header's opening comment and
#     its functions with the first sentence of each;
#   - libhpc.3: the headers.
# A function is a line starting with HPC_EXPORT (HPC_DL_EXPORT: hpc_dl.h;
# HPC_HD: hpc_rng.h's inline functions) up to its ';' or '{'; a comment (at the start of a
# line, runs of them read as one) documents what follows it up to the
# next comment: typedefs, blank lines and #defines between them do not
# end it.  A function without a comment is an error: the generator fails, naming it (tests/install.sh runs it
# against every exported symbol).
set -e
version=$1 out=$2
shift 2
mkdir -p "$out"
tab=$(printf '\t')
rec=$out/.functions
: > "$rec"
for h in "$@"; do
    base=$(basename "$h")
    awk -v hdr="$base" -v tab="$tab" '
    function flush_decl() {
        name = decl
        sub(/\(.*/, "", name)
        n = split(name, w, /[ *]+/)
        name = w[n]
        gsub(/[ \t]+/, " ", decl)
        sub(/HPC_(DL_)?EXPORT /, "", decl); sub(/HPC_HD /, "static inline ", decl)
        sub(/ HPC_NORETURN/, "", decl)
        sub(/[ ]*\{.*$/, ";", decl)
        group_decls = group_decls (group_decls ? "\001" : "") decl
        group_names = group_names (group_names ? " " : "") name
    }
    function end_group() {
        if (group_names) {
            n = split(group_names, nm, " ")
            for (i = 1; i <= n; i++) print nm[i] tab hdr tab group_names tab group_decls tab group_com
        }
        group_names = ""; group_decls = ""; group_com = ""
    }
    # a comment line: banners of dashes dropped; a comment right below
    # another continues it (the headers write sections as runs of /* */)
    function add(line) {
        if (line ~ /^-+$/) return
        com = com (com == "" ? "" : "\002") line
    }
    function com_done() {
        if (!topdone) { top = com; topdone = 1; return }
        if (last_com && group_names == "") { group_com = group_com "\002" com; return }
        end_group(); group_com = com
    }
    BEGIN { in_com = 0; in_decl = 0; top = ""; topdone = 0; last_com = 0 }
    in_com {
        line = $0
        if (line ~ /\*\//) { sub(/[ ]*\*\/.*$/, "", line); in_com = 0 }
        sub(/^ \* ?/, "", line); sub(/^ \*$/, "", line)
        add(line)
        if (!in_com) { com_done(); last_com = 1 }
        next
    }
    /^\/\*/ {
        line = $0
        sub(/^\/\* ?/, "", line)
        com = ""
        if (line ~ /\*\//) { sub(/[ ]*\*\/.*$/, "", line); add(line); com_done(); last_com = 1; next }
        add(line); in_com = 1
        next
    }
    { last_com = 0 }
    in_decl {
        decl = decl " " $0
        if ($0 ~ /[;{]/) { in_decl = 0; flush_decl() }
        next
    }
    /^(HPC_EXPORT|HPC_DL_EXPORT|HPC_HD) / {
        decl = $0
        if ($0 ~ /[;{]/) flush_decl(); else in_decl = 1
        next
    }
    # blank lines and other code (typedefs, #defines, bodies) stay in the
    # unit the comment above them documents, until the next comment
    END { end_group(); gsub(/\002/, "\n", top); printf "%s", top > "/dev/stderr" }
    ' "$h" >> "$rec" 2> "$out/.top-$base"
done

# roff: backslashes, and lines that would start with a request
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" -e 's/-/\\-/g'; }
# the comment as paragraphs (blank lines) with indented lines kept as they are
para() {
    tr '\002' '\n' | sed -e '1{/^$/d;}' | esc | awk '
        /^$/ { if (pre) { print ".fi"; pre = 0 } print ".PP"; next }
        /^   / { if (!pre) { print ".nf"; pre = 1 } print; next }
        { if (pre) { print ".fi"; pre = 0 } print }
        END { if (pre) print ".fi" }'
}
# the comment's first sentence, for NAME
first() {
    tr '\002' ' ' | sed -e 's/^ *//' -e 's/  */ /g' | awk '{
        # up to the end of a sentence (or a colon after a phrase), and on
        # to the next where that is a word or two ("Collective.")
        s = $0; cut = 0
        while (cut < 16) {
            rest = substr(s, cut + 1); c = index(rest, ". "); k = index(rest, ": ")
            if (k > 16 && (!c || k < c)) c = k
            if (!c) { cut = length(s); break }
            cut += c + 1
        }
        s = substr(s, 1, cut)
        sub(/[ ]+$/, "", s); sub(/[.:]$/, "", s)
        if (length(s) > 72) s = substr(s, 1, 69) "..."
        print s }' | esc
}

missing=$(awk -F "$tab" '$5 == "" { print $1 " (" $2 ")" }' "$rec")
if [ -n "$missing" ]; then
    echo "man3.sh: no comment above these declarations (write one: it is their man page):" >&2
    echo "$missing" >&2
    exit 1
fi

while IFS=$tab read -r name hdr names decls com; do
    upper=$(echo "$name" | tr 'a-z' 'A-Z')
    {
        echo ".TH $upper 3 \"\" \"hpckit $version\" \"libhpc\""
        echo ".SH NAME"
        echo "$(echo "$names" | sed 's/ /, /g' | esc) \\- $(printf '%s' "$com" | first)"
        echo ".SH SYNOPSIS"
        echo ".nf"
        echo ".B #include <$hdr>"
        echo ".PP"
        printf '%s\n' "$decls" | tr '\001' '\n' | esc
        echo ".fi"
        echo ".SH DESCRIPTION"
        printf '%s\n' "$com" | para
        echo ".SH SEE ALSO"
        echo ".BR $hdr (3),"
        echo ".BR libhpc (3)"
    } > "$out/$name.3"
done < "$rec"

for h in "$@"; do
    hdr=$(basename "$h")
    {
        echo ".TH $(echo "$hdr" | tr 'a-z' 'A-Z') 3 \"\" \"hpckit $version\" \"libhpc\""
        echo ".SH NAME"
        echo "$hdr \\- $(tr '\n' '\002' < "$out/.top-$hdr" | sed "s/^$hdr - //" | first)"
        echo ".SH SYNOPSIS"
        echo ".nf"
        echo ".B #include <$hdr>"
        echo ".fi"
        echo ".SH DESCRIPTION"
        tr '\n' '\002' < "$out/.top-$hdr" | para
        echo ".SH FUNCTIONS"
        awk -F "$tab" -v h="$hdr" '$2 == h { print $1 "\t" $5 }' "$rec" | while IFS=$tab read -r name com; do
            echo ".TP"
            echo ".BR $name (3)"
            printf '%s\n' "$com" | first
        done
        echo ".SH SEE ALSO"
        echo ".BR libhpc (3)"
    } > "$out/$hdr.3"
done

{
    echo ".TH LIBHPC 3 \"\" \"hpckit $version\" \"libhpc\""
    echo ".SH NAME"
    echo "libhpc \\- hpckit's library: rank setup, GPU binding, collectives, parallel HDF5, the app kit"
    echo ".SH SYNOPSIS"
    echo ".nf"
    for h in "$@"; do echo ".B #include <$(basename "$h")>"; done
    echo ".PP"
    echo "cc prog.c \$(pkg-config \\-\\-cflags \\-\\-libs libhpc)"
    echo ".fi"
    echo ".SH DESCRIPTION"
    echo "Functions return 0 or a negative HPC_ERR_* code; hpc_last_error() and hpc_last_cause() say why."
    echo "Each header has a page, and each function one of its own, made from the header's comments."
    echo ".SH HEADERS"
    for h in "$@"; do
        hdr=$(basename "$h")
        echo ".TP"
        echo ".BR $hdr (3)"
        tr '\n' '\002' < "$out/.top-$hdr" | sed "s/^$hdr - //" | first
    done
    echo ".SH SEE ALSO"
    echo ".BR hpc-info (1),"
    echo "the guides in PREFIX/share/doc/hpckit"
} > "$out/libhpc.3"
rm -f "$out/.top-"* "$rec"
