#!/bin/sh
# cpu_node.sh - hpckit where there is no GPU stack (issue 20: "load
# anywhere"): the programs and libraries of this build, laid out as an
# install is (bin/, lib/ as their $ORIGIN RUNPATHs say), run
#   A. without the GPU modules (lib/hpckit absent: a CPU-only install),
#   B. with the modules, but the CUDA runtime and NCCL hidden from the
#      loader (ld.so --inhibit-cache, a library path without their folder,
#      the modules' RUNPATH to them cut): a CPU node of a site that built
#      with CUDA.  Skipped (with a note) where the loader cannot hide them.
#   C. the CUDA runtime back, NCCL still hidden: the GPU module loads
#      (it opens NCCL itself) and names NCCL as what is missing.
# Each time: nothing of the GPU stack is loaded; hpc-info, hpc-info
# --selftest, a collective test program, the PMPI drop-in, hpc-odegen,
# hpc-train, hpc-matmul and hpc-collbench run on the CPU on 2 ranks; every
# device request (--device cuda, --mem cuda, --selftest --device,
# HPC_COLL_ALLREDUCE=nccl) is one line naming what is missing, exit 2.
. "$top_srcdir/tests/testlib.sh" cpunode
unset LD_LIBRARY_PATH HPC_MODULE_DIR
B=$top_builddir
FAIL_SHOW="$T/out $T/stderr"

step "a CPU node's install: the build's programs and libraries, no modules"
P=$T/p
mkdir -p "$P/bin"
rp=$(readelf -d "$B/apps/info/.libs/hpc-info" | sed -n 's/.*RUNPATH.*\[\$ORIGIN\/\([^]:]*\).*/\1/p')
[ -n "$rp" ] || fail "hpc-info has no \$ORIGIN RUNPATH"
L=$(realpath -m "$P/bin/$rp")
mkdir -p "$L"
# every program of the build (programs.list: NAME FOLDER)
while read -r p d; do
    cp "$B/$d/.libs/$p" "$P/bin/" || fail "no $d/$p in the build"
done < "$B/programs.list"
cp "$B/tests/.libs/coll_wrap" "$P/bin/" || fail "no tests/coll_wrap"
# the libraries under their sonames (libtool's dlname: the version moves)
for la in libhpc libhpc-core; do
    l=$(la_var "$B/libhpc/$la.la" dlname)
    cp -L "$B/libhpc/.libs/$l" "$L/" || fail "no $la's $l"
done
cp "$B/libhpc/mpi/.libs/libhpc-mpi.so" "$L/" || fail "no libhpc-mpi.so"
for f in "$P"/bin/* "$L"/*; do
    d=$(ldd "$f" 2>&1)
    case $f in
    */bin/*)
        got=$(echo "$d" | sed -n 's/.*libhpc-core\.so[^ ]* => \([^ ]*\) .*/\1/p')
        [ -n "$got" ] && [ "$(dirname "$(realpath "$got")")" = "$L" ] ||
            { echo "$d"; fail "$f does not take libhpc-core from $L"; } ;;
    esac
    echo "$d" | grep -q -e libcudart -e libnccl -e libcublas -e 'libcuda\.' && { echo "$d"; fail "$f loads the GPU stack"; }
done

# runs PROG ARGS on 2 ranks ($RUN: how, for part B); output in $T/out
run2() { $MPIEXEC_WRAP -n 2 $RUN "$@" > "$T/out" 2> "$T/stderr"; }
run1() { $RUN "$@" > "$T/out" 2> "$T/stderr"; }

# everything on the CPU; $1: what the GPU stack line must say
cpu_runs() {
    run1 "$P/bin/hpc-info" || fail "hpc-info"
    grep -q "(CUDA no, NCCL no," "$T/out" || fail "hpc-info claims a GPU stack"
    grep -q "^GPU stack: none (.*$1" "$T/out" || fail "hpc-info does not say why there is no GPU stack ($1)"
    run2 "$P/bin/hpc-info" --selftest || fail "hpc-info --selftest on 2 ranks"
    grep -q "^selftest: .* 0 failed" "$T/out" || fail "selftest: $(grep selftest "$T/out")"
    run2 "$P/bin/coll_wrap" || fail "the collective test coll_wrap on 2 ranks"
    LD_PRELOAD=$L/libhpc-mpi.so HPC_MPI_VERBOSE=1 run2 "$B/tests/pmpi_known" || fail "pmpi_known under libhpc-mpi.so"
    grep -q '^hpc-mpi: hpckit served [1-9]' "$T/stderr" || fail "the drop-in served nothing"
    run2 "$P/bin/hpc-odegen" -q -n 40 --nt 11 --out "$T/ode.h5" --force || fail "hpc-odegen"
    run2 "$P/bin/hpc-train" -q --data "$T/ode.h5" --layers 11,16,10 --steps 20 --out "$T/train" --force ||
        fail "hpc-train"
    [ -f "$T/train/checkpoint.h5" ] || fail "hpc-train wrote no checkpoint"
    run2 "$P/bin/hpc-matmul" --gen 64,48,40 --verify || fail "hpc-matmul"
    grep -q "verify passed" "$T/out" || fail "hpc-matmul: $(cat "$T/out")"
    run2 "$P/bin/hpc-collbench" -b 8 -e 64 --check -q || fail "hpc-collbench"
}

# a device request: one line naming what is missing ($1), exit 2 (on one
# rank, quicker; hpc-info --selftest --device on two)
refused() {
    what=$1 want=$2
    shift 2
    case $what in *--selftest*) run2 "$@" ;; *) run1 "$@" ;; esac
    one_line_error $? 2 "$what" "$(basename "$1")"
    grep -q -e "$want" "$T/stderr" || fail "$what: the line does not say '$want': $(cat "$T/stderr")"
}

device_requests() {
    refused "hpc-odegen --device cuda" "$1" "$P/bin/hpc-odegen" -q -n 10 --device cuda --out "$T/d.h5"
    [ ! -e "$T/d.h5" ] || fail "a refused --device cuda left an output"
    refused "hpc-train --device cuda" "$1" "$P/bin/hpc-train" -q --data "$T/ode.h5" --layers 11,16,10 \
        --steps 2 --device cuda --out "$T/dtrain"
    refused "hpc-matmul --device cuda" "$1" "$P/bin/hpc-matmul" --gen 64,64,64 --device cuda
    refused "hpc-collbench --mem cuda" "$1" "$P/bin/hpc-collbench" -b 8 -e 64 --mem cuda -q
    refused "hpc-info --selftest --device" "$1" "$P/bin/hpc-info" --selftest --device
    HPC_COLL_ALLREDUCE=nccl refused "HPC_COLL_ALLREDUCE=nccl" "$1" "$P/bin/hpc-info"
}

step "A. no modules: the CPU works, device requests name the missing module"
RUN=
if [ "${HAVE_CUDA_BUILD:-no}" = yes ]; then missing="libhpc-cuda.so: cannot open shared object file"
else missing="no CUDA: this hpckit was built without it"; fi
cpu_runs "$missing"
device_requests "$missing"

step "B. the modules, but the CUDA runtime and NCCL hidden from the loader"
if [ "${HAVE_CUDA_BUILD:-no}" != yes ]; then
    echo "(a build without CUDA has no modules: part B does not apply)"
    echo "cpu_node.sh: all checks passed"
    exit 0
fi
mkdir -p "$L/hpckit"
cp "$B/libhpc/.libs/libhpc-cuda.so" "$L/hpckit/" || fail "no libhpc-cuda.so"
for m in odegen matmul train; do cp "$B/apps/$m/.libs/hpc-$m-cuda.so" "$L/hpckit/" || fail "no hpc-$m-cuda.so"; done
# the folders of the CUDA runtime and NCCL, as the loader finds them now
cudirs=$(ldd "$L/hpckit/libhpc-cuda.so" | sed -n 's/.*\(libcudart\|libnccl\)[^ ]* => \(.*\)\/[^/]* .*/\2/p' | sort -u)
[ -n "$cudirs" ] || { ldd "$L/hpckit/libhpc-cuda.so"; fail "libhpc-cuda.so finds no libcudart/libnccl here"; }
ldso=$(readelf -l "$P/bin/hpc-info" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
hide=yes
"$ldso" --help 2>/dev/null | grep -q -e --inhibit-cache || hide="no: $ldso has no --inhibit-cache (glibc < 2.33)"
for d in $cudirs; do
    case $(realpath "$d") in
    /lib|/usr/lib|/lib64|/usr/lib64|/lib/*-linux-gnu|/usr/lib/*-linux-gnu) hide="no: they are in $d, a default folder" ;;
    esac
done
if [ "$hide" != yes ]; then
    echo "(part B skipped: the loader cannot hide the CUDA libraries here, $hide)"
    echo "cpu_node.sh: all checks passed"
    exit 0
fi
# cut the modules' RUNPATH entries to the CUDA folders (same length, so
# the ELF file stays valid): they now name folders that do not exist
for m in "$L"/hpckit/*.so; do
    for r in $(readelf -d "$m" | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p' | tr ':' ' '); do
        case $r in \$ORIGIN*) continue ;; esac
        python3 - "$m" "$r" <<'EOF' || fail "cannot cut $r from $m"
import sys
p, r = sys.argv[1], sys.argv[2].encode()
b = open(p, 'rb').read()
new = b'/' + b'x' * (len(r) - 1)
assert b.count(r) >= 1
open(p, 'wb').write(b.replace(r, new))
EOF
    done
done
# the library path: every folder the programs load from, but the CUDA ones
libpath=$(for f in "$P"/bin/*; do ldd "$f"; done | sed -n 's/.* => \(.*\)\/[^/]* (.*/\1/p' | sort -u |
          grep -vFx "$cudirs" | tr '\n' ':')
RUN="$ldso --inhibit-cache --library-path $libpath"
run1 "$P/bin/hpc-info" || fail "hpc-info through $ldso"
grep -q "^GPU stack: none (the CUDA module cannot be loaded: lib\(cudart\|nccl\)" "$T/out" ||
    { cat "$T/out"; fail "the CUDA runtime was not hidden, or hpc-info does not name it"; }
# (the CPU paths once more, shorter: selftest, odegen, train)
run2 "$P/bin/hpc-info" --selftest || fail "hpc-info --selftest on 2 ranks"
grep -q "^selftest: .* 0 failed" "$T/out" || fail "selftest: $(grep selftest "$T/out")"
run1 "$P/bin/hpc-odegen" -q -n 40 --nt 11 --out "$T/ode.h5" --force || fail "hpc-odegen"
run1 "$P/bin/hpc-train" -q --data "$T/ode.h5" --layers 11,16,10 --steps 20 --out "$T/train" --force ||
    fail "hpc-train"
device_requests "lib\(cudart\|nccl\)[^ ]*: cannot open shared object file"

step "C. the CUDA runtime, but no NCCL: the module loads, NCCL's rows name what is missing"
# NCCL is opened by the module at run time, not linked: a node with CUDA
# and no NCCL keeps its GPU for everything else (issue 34.4)
mkdir -p "$T/cudart"
for d in $cudirs; do ln -s "$d"/libcudart.so* "$T/cudart/" 2>/dev/null; done
ls "$T/cudart"/libcudart.so* > /dev/null 2>&1 || fail "no libcudart in $cudirs"
RUN="$ldso --inhibit-cache --library-path $libpath$T/cudart"
run1 "$P/bin/hpc-info" || fail "hpc-info with the CUDA runtime but no NCCL"
grep -q "(CUDA yes, NCCL no," "$T/out" && grep -q "^GPU stack: CUDA runtime .*, no NCCL (NCCL cannot be loaded: libnccl" "$T/out" ||
    { cat "$T/out"; fail "without NCCL the module does not load, or hpc-info does not say NCCL is missing"; }
HPC_COLL_ALLREDUCE=nccl refused "HPC_COLL_ALLREDUCE=nccl" "NCCL cannot be loaded: libnccl" "$P/bin/hpc-info"
# a site's own NCCL by path (HPC_NCCL_LIBRARY), refused with its name where it is not there
RUN=
HPC_NCCL_LIBRARY=/nonexistent/libnccl.so.2 run1 "$B/apps/info/hpc-info" || fail "hpc-info with HPC_NCCL_LIBRARY"
grep -q "no NCCL (NCCL cannot be loaded: /nonexistent/libnccl.so.2" "$T/out" || fail "HPC_NCCL_LIBRARY not used"
echo "cpu_node.sh: all checks passed"
