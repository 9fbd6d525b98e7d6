#!/bin/sh
# needed.sh - what each library and program of this build links (readelf
# -d: NEEDED and RUNPATH), against the layers of docs/architecture.md:
#   libhpc-core.so  MPI and the C runtime (libc, libm) only
#   libhpc.so       those and libhpc-core: no HDF5
#   libhpc-h5.a     static (HDF5 comes with the programs that carry it)
#   libhpc-mpi.so   MPI, the C runtime and libhpc-core (not libhpc.so)
#   hpc-info, hpc-collbench  no HDF5: not NEEDed by them nor by any
#                   library of ours they load, and no object of theirs
#                   needs an HDF5 symbol or one of libhpc-h5's
#   the programs    no CUDA runtime, NCCL, cuBLAS or driver library, and no
#                   RUNPATH but $ORIGIN's (none to the CUDA folder) and the
#                   configured libdir (libtool adds it where the prefix is
#                   not a system folder: make distcheck's _inst/lib)
#   the modules     (lib/hpckit, a build with CUDA) the CUDA runtime, NCCL
#                   for libhpc's own, and their entry points exported
# "MPI" is what a plain MPI program links: tests/pmpi_known's NEEDED list.
B=${top_builddir:-.}
libdir=$(sed -n "s/^libdir='\\(.*\\)'$/\\1/p" "$B/libhpc/libhpc.la")
fail() { echo "FAIL: $*"; exit 1; }
command -v readelf >/dev/null 2>&1 || { echo "SKIP: no readelf"; exit 77; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
runpath() { readelf -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p' | tr ':' '\n'; }
# only LIB's NEEDED entries matching the basic regular expressions in $allow
only() {
    for n in $(needed "$1"); do
        ok=
        for a in $allow; do echo "$n" | grep -qx "$a" && ok=1 && break; done
        [ -n "$ok" ] || fail "$(basename "$1") NEEDs $n (allowed: $allow)"
    done
}
has() { needed "$1" | grep -qx "$2" || fail "$(basename "$1") does not NEED $2: $(needed "$1" | tr '\n' ' ')"; }

libc='libc\.so\..* libm\.so\..* ld-linux.* libgcc_s\.so\..* libdl\.so\..* libpthread\.so\..* librt\.so\..*'
mpi=$(needed "$B/tests/pmpi_known" | sed 's/\./\\./g')
[ -n "$mpi" ] || fail "tests/pmpi_known has no NEEDED list"
hdf5=$(for l in ${HDF5_LIBS:--lhdf5}; do case $l in -l*) echo "lib${l#-l}\\.so\\..*" ;; esac; done)
hdf5=$(printf '%s\n' $hdf5 'libhdf5.*\.so\..*')
L=$B/libhpc/.libs

allow="$libc $mpi"
only "$L/libhpc-core.so"
has "$L/libhpc-core.so" "$(needed "$B/tests/pmpi_known" | grep -v '^libc\.\|^ld-\|^libm\.' | head -n 1)"

allow="$libc $mpi libhpc-core\.so\..*"
only "$L/libhpc.so"
has "$L/libhpc.so" 'libhpc-core\.so\..*'
# (a plain static library, beside the libtool ones' .libs)
H5A=$L/../libhpc-h5.a
[ -f "$H5A" ] || fail "no $H5A"
[ ! -e "$L/libhpc-h5.so" ] || fail "libhpc-h5 is a shared library: the programs would need a third one"
nm --defined-only "$H5A" | grep -q ' T hpc_h5_create$' || fail "libhpc-h5.a defines no hpc_h5_create: $(ar t "$H5A" | tr '\n' ' ')"

allow="$libc $mpi libhpc-core\.so\..*"
only "$L/../mpi/.libs/libhpc-mpi.so"
has "$L/../mpi/.libs/libhpc-mpi.so" 'libhpc-core\.so\..*'

gpu='libcudart.* libnccl.* libcublas.* libcuda\..* libcublasLt.* libstdc++.*'
# every program of the build (programs.list: NAME FOLDER a line)
progs=$(while read -r p d; do echo "$B/$d/.libs/$p"; done < "$B/programs.list")
[ "$(wc -l < "$B/programs.list")" -ge 6 ] || fail "programs.list names too few programs: $progs"
for f in "$L/libhpc-core.so" "$L/libhpc.so" "$L/../mpi/.libs/libhpc-mpi.so" $progs; do
    [ -f "$f" ] || fail "$f is not built"
    for g in $gpu; do needed "$f" | grep -qx "$g" && fail "$(basename "$f") NEEDs $(needed "$f" | grep -x "$g")"; done
    for r in $(runpath "$f"); do
        case $r in
        \$ORIGIN*) ;;
        "$libdir") ;;
        "$(realpath "$B")"/*) case $f in */libhpc.so|*/libhpc-mpi.so) ;; *) fail "$(basename "$f"): RUNPATH $r" ;; esac ;;
        *) fail "$(basename "$f") has RUNPATH $r (only \$ORIGIN's: nothing of the GPU stack)" ;;
        esac
    done
done
for f in $progs; do
    has "$f" 'libhpc-core\.so\..*'
done
has "$B/apps/info/.libs/hpc-info" 'libhpc\.so\..*'
# hpc-info and hpc-collbench: no HDF5, from their objects to every
# library of ours they load (where the loader finds them: ldd too)
closure() {
    echo "$1"
    for n in $(needed "$1"); do
        case $n in libhpc*.so*) closure "$L/${n%.so*}.so" ;; esac
    done
}
h5api=$(ar t "$H5A" >/dev/null && nm -g --defined-only "$H5A" 2>/dev/null | awk 'NF == 3 && $3 ~ /^hpc_/ { print $3 }' | sort -u)
[ -n "$h5api" ] || fail "libhpc-h5.a defines no hpc_ symbol"
for p in info/hpc-info collbench/hpc-collbench; do
    exe=$B/apps/${p%/*}/.libs/${p#*/}
    for f in $(closure "$exe" | sort -u); do
        needed "$f" | grep -q '^libhdf5' && fail "${p#*/} loads HDF5: $(basename "$f") NEEDs $(needed "$f" | grep '^libhdf5' | tr '\n' ' ')"
    done
    if command -v ldd >/dev/null 2>&1; then
        LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$exe" | grep -q 'libhdf5' &&
            { ldd "$exe"; fail "${p#*/} loads HDF5 (ldd)"; }
    fi
    objs=$(ls "$B/apps/${p%/*}"/*.o | grep -v 'small_loop\|mpi_allreduce_bench')
    [ -n "$objs" ] || fail "no objects of ${p#*/}"
    u=$(for o in $objs; do nm "$o"; done | awk '$1 == "U" { print $2 }' | sort -u)
    bad=$(echo "$u" | grep '^H5' | head -n 3)
    [ -z "$bad" ] || fail "${p#*/}'s objects call HDF5: $bad"
    bad=$(echo "$u" | grep -Fx "$h5api" | head -n 3)
    [ -z "$bad" ] || fail "${p#*/}'s objects call libhpc-h5: $bad"
done
# hpc-info links the BLAS the programs link: it reports (and restarts
# for) the kernel they run
for l in $(needed "$B/apps/matmul/.libs/hpc-matmul" | grep -i blas); do has "$B/apps/info/.libs/hpc-info" "$(echo "$l" | sed 's/\./\\./g')"; done

if [ "${HAVE_CUDA_BUILD:-no}" = yes ]; then
    m=$L/libhpc-cuda.so
    has "$m" 'libcudart\.so\..*'
    [ "$(needed "$m" | grep -c '^libhpc')" = 0 ] || fail "libhpc-cuda.so NEEDs libhpc: it must stand alone"
    needed "$m" | grep -q '^libcublas' && fail "libhpc-cuda.so NEEDs cuBLAS"
    nm -D --defined-only "$m" | grep -q ' hpc_gpu_module_ops$' || fail "libhpc-cuda.so does not export hpc_gpu_module_ops"
    for e in odegen:odegen_cuda_open matmul:matmul_cuda_ops train:train_cuda_open; do
        m=$B/apps/${e%%:*}/.libs/hpc-${e%%:*}-cuda.so
        has "$m" 'libcudart\.so\..*'
        needed "$m" | grep -q '^libcublas' && fail "$(basename "$m") NEEDs cuBLAS (it is opened at run time)"
        nm -D --defined-only "$m" | grep -q " ${e#*:}$" || fail "$(basename "$m") does not export ${e#*:}"
    done
    echo "(the modules: the CUDA runtime, entry points exported)"
fi
echo "needed.sh: libhpc-core: $(needed "$L/libhpc-core.so" | tr '\n' ' ')"
echo "needed.sh: libhpc: $(needed "$L/libhpc.so" | tr '\n' ' ')"
echo "needed.sh: hpc-info: $(needed "$B/apps/info/.libs/hpc-info" | tr '\n' ' ')(no HDF5, nor in libhpc)"
echo "needed.sh: libhpc-mpi: $(needed "$L/../mpi/.libs/libhpc-mpi.so" | tr '\n' ' ')"
echo "needed.sh: all checks passed"
