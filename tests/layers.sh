#!/bin/sh
# layers.sh - the layers of docs/architecture.md, checked from the object
# files' symbols (nm), not only described: every global symbol an object
# needs that some object of hpckit defines must come from its own layer
# or one it may use:
#   err        err.c, the leaf: nothing of hpckit
#   core       libhpc/*.c: err
#   coll       libhpc/coll/: err, core
#   h5         libhpc/h5*.c, lock.c: err, core, coll
#   app        libhpc/app/: err, core, coll, h5
#   programs   apps/*/ (their objects): all of the above
#   dropin     libhpc/mpi/ (libhpc-mpi.so): err, core, coll
#   gpumodule  libhpc-cuda.so (cuda/module.c, coll/cuda.cu): nothing
#   appmodule  the programs' GPU modules (apps/*/*.cu): err, core (hpc_dlsyms)
# The check runs on this build's objects, then on a list where one app kit
# object is put in the core: it must fail there, naming the call, or it
# could not catch anything.
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
        */libhpc/.libs/libio_la-h5*.o|*/libhpc/.libs/libio_la-lock.o) echo "h5 $o" ;;
        */libhpc/app/.libs/libio_la-*.o) echo "app $o" ;;
        */libhpc/mpi/.libs/*.o) echo "dropin $o" ;;
        */apps/*/.libs/*.o) echo "appmodule $o" ;;
        */apps/*/.libs/*|*/libhpc/*) ;;                   # other copies of the same
        */apps/*/cuda.o|*/apps/*/gpu.o) ;;                # cudalt.sh's non-PIC copies
        */apps/*/*.o) echo "programs $o" ;;
        esac
    done
}

# check LIST: 0, or 1 with a line per call that runs the wrong way
check() {
    while read -r layer obj; do
        nm "$obj" | awk -v L="$layer" -v O="$obj" '
            $1 == "U" { print "U", L, O, $2; next }
            NF == 3 && $2 ~ /^[TDBRCVWi]$/ { print "D", L, O, $3 }'
    done < "$1" > "$T/syms"
    awk '
    BEGIN {
        ok["err"] = "err"
        ok["core"] = "err core"
        ok["coll"] = "err core coll"
        ok["h5"] = "err core coll h5"
        ok["app"] = "err core coll h5 app"
        ok["programs"] = "err core coll h5 app programs"
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

objects > "$T/list"
for l in err core coll h5 app programs dropin; do
    grep -q "^$l " "$T/list" || fail "no objects of layer $l found under $B (object names changed?)"
done
n=$(wc -l < "$T/list")
check "$T/list" > "$T/out" || { cat "$T/out"; fail "calls against the layers"; }
echo "layers: $n objects in $(cut -d' ' -f1 "$T/list" | sort -u | tr '\n' ' ')- every call goes down"

# the check must see a call upward: the app kit's app.c put in the core
sed 's/^app \(.*libio_la-app\.o\)$/core \1/' "$T/list" > "$T/wrong"
cmp -s "$T/list" "$T/wrong" && fail "no libio_la-app.o to move (object names changed?)"
check "$T/wrong" > "$T/out" && fail "app.c counted in the core: the check saw nothing wrong"
grep -q "libio_la-app.o (core) uses .* of coll\|libio_la-app.o (core) uses .* of h5\|libio_la-app.o (core) uses .* of app" \
    "$T/out" || { cat "$T/out"; fail "the violation was not named"; }
echo "layers: a call upward is caught: $(head -n 1 "$T/out")"
echo "layers.sh: all checks passed"
