#!/bin/sh
# install.sh - hpckit as a user gets it: `make install DESTDIR=...`, then
# the prefix moved whole to another folder (as a site copies a tree or a
# user a home directory), and everything used from there with no
# LD_LIBRARY_PATH:
#   - the programs, libhpc.so and libhpc-mpi.so carry a RUNPATH relative
#     to their own place ($ORIGIN), and resolve libhpc.so and
#     libhpc-core.so from the moved prefix;
#   - the GPU modules (lib/hpckit, in a build with CUDA) are installed, and
#     libhpc-core finds its own there, beside itself in the moved prefix;
#   - a user program built with plain cc and `pkg-config --cflags --libs
#     libhpc` (MPI and HDF5 come with it) links and runs on 2 ranks;
#   - a man page for every program, the guides in share/doc/hpckit, and
#     --help's "Guide:" line names a file that exists there;
#   - the modulefile loads (Environment Modules, where installed) and puts
#     the programs, pkg-config and man pages of the moved prefix in reach.
. "$top_srcdir/tests/testlib.sh" install
step "make install DESTDIR=$T/stage"
make -C "$top_builddir" install DESTDIR="$T/stage" > "$T/install.log" 2>&1 || { tail "$T/install.log"; fail "make install"; }
prefix=$(sed -n "s/^prefix = //p" "$top_builddir/Makefile")
[ -d "$T/stage$prefix/bin" ] || fail "nothing installed under $T/stage$prefix"
mv "$T/stage$prefix" "$T/moved"
P=$T/moved
progs="hpc-info hpc-collbench hpc-odegen hpc-matmul hpc-train hpc-h5check"
# the harness points at the build tree's modules: not here
unset LD_LIBRARY_PATH HPC_MODULE_DIR

step "RUNPATH relative to \$ORIGIN, libhpc found in the moved prefix"
for p in $progs; do
    [ -x "$P/bin/$p" ] || fail "$p not installed"
    readelf -d "$P/bin/$p" | grep -q 'RUNPATH.*\$ORIGIN/\.\./lib' || { readelf -d "$P/bin/$p" | grep PATH; fail "$p: no \$ORIGIN RUNPATH"; }
    for l in libhpc libhpc-core; do
        ldd "$P/bin/$p" | grep -q "$l.so.* => $P/\(bin/\.\./\)\{0,1\}lib/" || { ldd "$P/bin/$p"; fail "$p does not find $l in $P/lib"; }
    done
done
for l in libhpc-mpi.so libhpc.so; do
    readelf -d "$P/lib/$l" | grep -q 'RUNPATH.*\$ORIGIN' || fail "$l: no \$ORIGIN RUNPATH"
done
# (libtool puts the configured libdir ahead of $ORIGIN in the libraries'
# RUNPATH: only where nothing is installed there is the moved one found)
if [ ! -e "$prefix/lib/libhpc-core.so.2" ]; then
    for l in libhpc-mpi.so libhpc.so; do
        ldd "$P/lib/$l" | grep -q "libhpc-core.so.* => $P/lib/" || fail "$l does not find libhpc-core beside itself"
    done
fi
"$P/bin/hpc-info" --version > "$T/version" 2>&1 || { cat "$T/version"; fail "hpc-info --version from the moved prefix"; }
grep -q "hpckit" "$T/version" || fail "hpc-info --version says: $(cat "$T/version")"

step "the GPU modules in lib/hpckit, found from the moved prefix"
if [ "${HAVE_CUDA_BUILD:-no}" = yes ]; then
    for m in libhpc-cuda hpc-odegen-cuda hpc-matmul-cuda hpc-train-cuda; do
        [ -f "$P/lib/hpckit/$m.so" ] || fail "$m.so not installed in lib/hpckit"
    done
    # libhpc-core opens its module where it is itself: the moved prefix
    "$P/bin/hpc-info" > "$T/info.out" 2>&1 || { cat "$T/info.out"; fail "hpc-info from the moved prefix"; }
    grep -q "^GPU stack: .*($P/lib/hpckit/libhpc-cuda.so)" "$T/info.out" ||
        { cat "$T/info.out"; fail "hpc-info does not report the module of the moved prefix"; }
    # and none of the moved prefix's modules wants the build tree
    for m in "$P"/lib/hpckit/*.so; do
        LD_LIBRARY_PATH= ldd "$m" | grep -q "not found" && { ldd "$m"; fail "$m: a library not found"; }
    done
else
    [ ! -d "$P/lib/hpckit" ] || [ -z "$(ls "$P/lib/hpckit")" ] || fail "modules installed by a build without CUDA"
    "$P/bin/hpc-info" > "$T/info.out" 2>&1 || fail "hpc-info from the moved prefix"
    grep -q "^GPU stack: none (" "$T/info.out" || { cat "$T/info.out"; fail "hpc-info's GPU stack line"; }
fi

step "a user program: cc + pkg-config --cflags --libs libhpc, 2 ranks"
pc=pkg-config
PKG_CONFIG_PATH=$P/lib/pkgconfig
export PKG_CONFIG_PATH
flags=$($pc --cflags --libs libhpc) || fail "pkg-config libhpc"
cc -std=c11 -o "$T/user" "$top_srcdir/tests/install_user.c" $flags -Wl,-rpath,"$P/lib" 2> "$T/cc.log" ||
    { cat "$T/cc.log"; fail "cc \$(pkg-config --cflags --libs libhpc) user.c does not build"; }
"$MPIEXEC_WRAP" -n 2 "$T/user" "$T/user.h5" > "$T/user.out" 2>&1 || { cat "$T/user.out"; fail "the user program failed"; }
grep -qx "ok 2" "$T/user.out" || fail "the user program says: $(cat "$T/user.out")"
[ -f "$T/user.h5" ] || fail "the user program's HDF5 file is missing"

step "man pages, guides, --help's Guide line"
for p in $progs; do
    if [ -n "${HELP2MAN:-}" ]; then
        m=$P/share/man/man1/$p.1
        [ -s "$m" ] || fail "no man page $m"
        grep -q '^\.SH "*OPTIONS\|^\.SH DESCRIPTION' "$m" || fail "$m has no DESCRIPTION"
        grep -q -- '\\-\\-help' "$m" || fail "$m does not list --help"
    fi
    g=$("$P/bin/$p" --help 2>/dev/null | sed -n 's/^Guide: \([^ ]*\) .*/\1/p')
    [ -n "$g" ] || fail "$p --help has no Guide line"
    [ -f "$g" ] || fail "$p --help names the guide $g, which does not exist"
    case $g in "$P"/*) ;; *) fail "$p --help names $g, not the guide of its own (moved) prefix" ;; esac
done
for d in README.md collectives.md odegen.md matmul.md train.md data.md architecture.md; do
    [ -s "$P/share/doc/hpckit/$d" ] || fail "share/doc/hpckit/$d not installed"
done

for k in $("$P/bin/hpc-h5check" --list-kinds | cut -d' ' -f1); do
    cmp -s "$P/share/hpckit/data/schemas/$k.json" "$top_srcdir/data/schemas/$k.json" ||
        fail "share/hpckit/data/schemas/$k.json not installed"
done

step "the modulefile"
mf=$P/share/hpckit/modulefiles/hpckit
[ -f "$mf/$(ls "$mf" | head -n 1)" ] || fail "no modulefile in $mf"
init=/usr/share/modules/init/sh
if [ -f "$init" ]; then
    # a clean login-like shell: only what the module adds
    env -i HOME="$HOME" PATH=/usr/bin:/bin sh -c ". $init; module use $P/share/hpckit/modulefiles && module load hpckit &&
        command -v hpc-info && pkg-config --modversion libhpc && echo \"batch=\$HPCKIT_BATCH\" && man -w hpc-train" \
        > "$T/module.out" 2>&1 || { cat "$T/module.out"; fail "module load hpckit"; }
    grep -qx "$P/bin/hpc-info" "$T/module.out" || { cat "$T/module.out"; fail "the module does not put $P/bin first on PATH"; }
    grep -qx "batch=$P/share/hpckit/batch" "$T/module.out" || { cat "$T/module.out"; fail "HPCKIT_BATCH"; }
    [ -z "${HELP2MAN:-}" ] || grep -q "$P/share/man/man1/hpc-train.1" "$T/module.out" || { cat "$T/module.out"; fail "MANPATH"; }
else
    echo "(Environment Modules not installed: the modulefile was not loaded)"
fi
echo "install.sh: all checks passed"
