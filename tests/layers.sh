#!/bin/sh
# layers.sh - the layers of docs/architecture.md, checked from the object
# files' symbols (nm), not only described: every global symbol an object
# needs that some object of hpckit defines must come from its own layer
# or one it may use:
#   err        err.c, the leaf: nothing of hpckit
#   core       libhpc/*.c: err
#   coll       libhpc/coll/: err, core
#   app        libhpc/app/ without HDF5 (libhpc.so): err, core, coll
#   h5         libhpc/h5*.c: err, core, coll
#   apph5      libhpc/app/'s HDF5 part (libhpc-h5): err, core, coll, app, h5
#   programs   apps/*/ (their objects): all of the above
#   dropin     libhpc/mpi/ (libhpc-mpi.so): err, core, coll
#   gpumodule  libhpc-cuda.so (cuda/module.c, coll/cuda.cu): nothing
#   appmodule  the programs' GPU modules (apps/*/*.cu): err, core (hpc_dlsyms)
# The check runs on this build's objects, then on a list where one app kit
# object is put in the core: it must fail there, naming the call, or it
# could not catch anything.
#
# Inside a layer, no loop between files: the graph "object A needs a
# symbol that object B of its own layer defines" (a program's objects:
# of its own program) has no cycle (a strongly connected component of
# more than one object).  The loops still known are listed below, each by
# the one edge that closes it; a listed edge that no longer closes a loop
# fails too (the list cannot go stale: remove it).  A loop planted in the
# symbols (an object made to need what one it uses defines) must fail.
B=${top_builddir:-.}
fail() { echo "FAIL: $*"; exit 1; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/layers-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# LAYER OBJECT lines for this build (libtool's PIC objects in .libs/)
objects() {
    for o in $(find "$B/libhpc" "$B/apps" -name '*.o' | sort); do
        case $o in
        */libhpc/.libs/libcore_la-err.o) echo "err $o" ;;
        */libhpc/.libs/libcore_la-*.o) echo "core $o" ;;
        */libhpc/coll/.libs/libtesting_la-*.o) ;;        # test hooks: tests only
        */libhpc/coll/.libs/cuda.o|*/libhpc/cuda/.libs/*.o) echo "gpumodule $o" ;;
        */libhpc/coll/.libs/libcore_la-*.o|*/libhpc/coll/alg/.libs/libcore_la-*.o) echo "coll $o" ;;
        */libhpc/.libs/libio_la-h5*.o) echo "h5 $o" ;;
        */libhpc/app/.libs/libapp_la-*.o) echo "app $o" ;;
        */libhpc/app/.libs/libio_la-*.o) echo "apph5 $o" ;;
        */libhpc/mpi/.libs/*.o) echo "dropin $o" ;;
        */apps/*/.libs/*.o) echo "appmodule $o" ;;
        */apps/*/.libs/*|*/libhpc/*) ;;                   # other copies of the same
        */apps/*/cuda.o|*/apps/*/gpu.o) ;;                # cudalt.sh's non-PIC copies
        */apps/*/*.o) echo "programs $o" ;;
        esac
    done
}

# syms LIST: "U|D LAYER OBJECT SYMBOL" for every object of the list
syms() {
    while read -r layer obj; do
        nm "$obj" | awk -v L="$layer" -v O="$obj" '
            $1 == "U" { print "U", L, O, $2; next }
            NF == 3 && $2 ~ /^[TDBRCVWi]$/ { print "D", L, O, $3 }'
    done < "$1"
}

# check LIST: 0, or 1 with a line per call that runs the wrong way
check() {
    syms "$1" > "$T/syms"
    awk '
    BEGIN {
        ok["err"] = "err"
        ok["core"] = "err core"
        ok["coll"] = "err core coll"
        ok["app"] = "err core coll app"
        ok["h5"] = "err core coll h5"
        ok["apph5"] = "err core coll app h5 apph5"
        ok["programs"] = "err core coll app h5 apph5 programs"
        ok["dropin"] = "err core coll dropin"
        ok["gpumodule"] = "gpumodule"
        ok["appmodule"] = "err core appmodule"
    }
    $1 == "D" && $2 == "dropin" && $4 ~ /^P?MPI_/ { next }   # MPI'"'"'s own, interposed
    $1 == "D" && $2 != "programs" && $2 != "appmodule" { def[$4] = $2 }
    $1 == "D" && ($2 == "programs" || $2 == "appmodule") && !($4 in def) { def[$4] = $2 }
    $1 == "U" { n++; ul[n] = $2; uo[n] = $3; us[n] = $4 }
    END {
        for (i = 1; i <= n; i++) {
            if (!(us[i] in def)) continue;           # libc, MPI, HDF5, CUDA ...
            split(ok[ul[i]], a, " ")
            good = 0
            for (k in a) if (a[k] == def[us[i]]) good = 1
            if (!good) { printf "%s (%s) uses %s of %s\n", uo[i], ul[i], us[i], def[us[i]]; bad++ }
        }
        exit bad > 0
    }' "$T/syms"
}

# The loops inside a layer known when the check came (issue 35), each as
# "LAYER A B": the edge A -> B that closes it.  Those who break one remove
# its line; the list is to be empty.
known_loops='
'

# edges SYMS: "LAYER A B" for each object A that needs a symbol object B
# of its own layer defines (a program's: of its own program; an object's
# short name: its source's path, .o, without libtool's or a program's
# prefix)
edges() {
    awk -v B="$B/" '
    function short(o) {
        if (index(o, B) == 1) o = substr(o, length(B) + 1)
        sub(/\/\.libs\//, "/", o)
        sub(/\/lib[a-z_]*_la-/, "/", o)
        sub(/\/hpc_[a-z0-9_]*-/, "/", o)
        return o
    }
    function group(l, o,   p) {
        if (l != "programs" && l != "appmodule") return l
        split(o, p, "/")
        return l " " p[1] "/" p[2]
    }
    { o = short($3); g = group($2, o) }
    $1 == "D" { def[g, $4] = def[g, $4] " " o; next }
    { n++; ug[n] = g; uo[n] = o; us[n] = $4; ul[n] = $2 }
    END {
        for (i = 1; i <= n; i++) {
            if (!((ug[i], us[i]) in def)) continue
            k = split(def[ug[i], us[i]], d, " ")
            for (j = 1; j <= k; j++)
                if (d[j] != uo[i] && !((ul[i], uo[i], d[j]) in seen)) {
                    seen[ul[i], uo[i], d[j]] = 1
                    print ul[i], uo[i], d[j]
                }
        }
    }' "$1"
}

# loops EDGES KNOWN: 0, or 1 with a line per loop not in KNOWN (edges
# "LAYER A B" taken out first) and per KNOWN edge that closes no loop
loops() {
    awk '
    # Tarjan: the strongly connected components of the graph in out[]
    function visit(v,   i, w, c, m) {
        idx[v] = lo[v] = ++count
        stk[++sp] = v
        on[v] = 1
        for (i = 1; i <= nout[v]; i++) {
            w = out[v, i]
            if (!(w in idx)) {
                visit(w)
                if (lo[w] < lo[v]) lo[v] = lo[w]
            } else if (on[w] && idx[w] < lo[v]) lo[v] = idx[w]
        }
        if (lo[v] != idx[v]) return
        c = ""
        m = 0
        do {
            w = stk[sp--]
            on[w] = 0
            comp[w] = v
            c = c " " w
            m++
        } while (w != v)
        if (m > 1) found[++nfound] = c
    }
    function components(skip,   e, p) {
        split("", idx); split("", lo); split("", on); split("", comp)
        split("", out); split("", nout); split("", found)
        count = sp = nfound = 0
        for (e = 1; e <= ne; e++) {
            if (skip && (el[e], ea[e], eb[e]) in known) continue
            out[el[e] " " ea[e], ++nout[el[e] " " ea[e]]] = el[e] " " eb[e]
        }
        for (e = 1; e <= ne; e++)
            if (!((el[e] " " ea[e]) in idx)) visit(el[e] " " ea[e])
    }
    FILENAME == ARGV[1] { if (NF == 3) { known[$1, $2, $3] = 1; kl[++nk] = $0 }; next }
    { ne++; el[ne] = $1; ea[ne] = $2; eb[ne] = $3 }
    END {
        components(1)
        for (i = 1; i <= nfound; i++) { sub(/^ [a-z]* /, "", found[i]); gsub(/ [a-z]+ /, " ", found[i])
            printf "a loop: %s\n", found[i]; bad++ }
        components(0)
        for (i = 1; i <= nk; i++) {
            split(kl[i], f, " ")
            a = f[1] " " f[2]; b = f[1] " " f[3]
            ok = 0
            for (e = 1; e <= ne; e++) if (el[e] == f[1] && ea[e] == f[2] && eb[e] == f[3]) ok = 1
            if (!ok || comp[a] != comp[b]) { printf "a known loop is gone: %s -> %s (%s): remove it from known_loops\n", f[2], f[3], f[1]; bad++ }
        }
        exit bad > 0
    }' "$2" "$1"
}

objects > "$T/list"
for l in err core coll app h5 apph5 programs dropin; do
    grep -q "^$l " "$T/list" || fail "no objects of layer $l found under $B (object names changed?)"
done
n=$(wc -l < "$T/list")
check "$T/list" > "$T/out" || { cat "$T/out"; fail "calls against the layers"; }
echo "layers: $n objects in $(cut -d' ' -f1 "$T/list" | sort -u | tr '\n' ' ')- every call goes down"

# the check must see a call upward: the app kit's app.c put in the core
sed 's/^app \(.*libapp_la-app\.o\)$/core \1/' "$T/list" > "$T/wrong"
cmp -s "$T/list" "$T/wrong" && fail "no libapp_la-app.o to move (object names changed?)"
check "$T/wrong" > "$T/out" && fail "app.c counted in the core: the check saw nothing wrong"
grep -q "libapp_la-app.o (core) uses .* of coll\|libapp_la-app.o (core) uses .* of app" \
    "$T/out" || { cat "$T/out"; fail "the violation was not named"; }
echo "layers: a call upward is caught: $(head -n 1 "$T/out")"
# no loop between the objects of one layer, but the known ones
syms "$T/list" > "$T/syms"
edges "$T/syms" > "$T/edges"
[ -s "$T/edges" ] || fail "no object needs another of its layer (nm output changed?)"
printf '%s\n' "$known_loops" > "$T/known"
loops "$T/edges" "$T/known" > "$T/out" || { cat "$T/out"; fail "loops inside a layer (docs/architecture.md)"; }
echo "layers: $(wc -l < "$T/edges") uses between objects of one layer, no loop but the $(grep -c . "$T/known") known"

# the check must see a planted loop: a file of the app kit that app.o
# uses, and that uses no file of its layer, made to need what app.o defines
leaf=$(awk '$1 == "app" && $2 == "libhpc/app/app.o" { print $3 }' "$T/edges" | while read -r b; do
           awk -v b="$b" '$1 == "app" && $2 == b { n++ } END { exit n > 0 }' "$T/edges" && echo "$b" && break
       done)
[ -n "$leaf" ] || fail "app.o uses no leaf of the app kit (object names changed?)"
app=$(grep '^app .*/libapp_la-app\.o$' "$T/list" | cut -d' ' -f2)
obj=$(grep "^app .*/libapp_la-$(basename "$leaf")\$" "$T/list" | cut -d' ' -f2)
sym=$(awk -v o="$app" '$1 == "D" && $3 == o { print $4; exit }' "$T/syms")
[ -n "$obj" ] && [ -n "$sym" ] || fail "no object for $leaf, or app.o defines nothing"
{ cat "$T/syms"; echo "U app $obj $sym"; } > "$T/planted"
edges "$T/planted" > "$T/edges2"
loops "$T/edges2" "$T/known" > "$T/out" && fail "$leaf made to need $sym of app.o: the check saw no loop"
grep "^a loop: " "$T/out" | grep "libhpc/app/app\.o" | grep -q "$leaf" || { cat "$T/out"; fail "the planted loop was not named"; }
echo "layers: a planted loop is caught: $(head -n 1 "$T/out")"

# and a listed loop that is gone
printf '%s\ncore libhpc/err.o libhpc/log.o\n' "$known_loops" > "$T/known2"
loops "$T/edges" "$T/known2" > "$T/out" && fail "a loop listed that is not there: the check did not say it"
grep -q "known loop is gone: libhpc/err.o -> libhpc/log.o" "$T/out" || { cat "$T/out"; fail "the stale entry was not named"; }
echo "layers.sh: all checks passed"
