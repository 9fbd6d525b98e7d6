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
sh "$top_srcdir/tests/install_lock.sh" "$top_builddir" install DESTDIR="$T/stage" > "$T/install.log" 2>&1 || { tail "$T/install.log"; fail "make install"; }
prefix=$(sed -n "s/^prefix = //p" "$top_builddir/Makefile")
[ -d "$T/stage$prefix/bin" ] || fail "nothing installed under $T/stage$prefix"
mv "$T/stage$prefix" "$T/moved"
P=$T/moved
# every program of the build (programs.list: Makefile.am's one list)
progs=$(cut -d' ' -f1 "$top_builddir/programs.list")
[ "$(wc -l < "$top_builddir/programs.list")" -ge 6 ] || fail "programs.list names too few programs: $progs"
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
core_so=$(la_var "$top_builddir/libhpc/libhpc-core.la" dlname)
if [ ! -e "$prefix/lib/$core_so" ]; then
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
# no -Wl,-rpath of ours: libhpc.pc's Libs carry it
cc -std=c11 -o "$T/user" "$top_srcdir/tests/install_user.c" $flags 2> "$T/cc.log" ||
    { cat "$T/cc.log"; fail "cc \$(pkg-config --cflags --libs libhpc) user.c does not build"; }
"$MPIEXEC_WRAP" -n 2 "$T/user" "$T/user.h5" > "$T/user.out" 2>&1 || { cat "$T/user.out"; fail "the user program failed"; }
grep -qx "ok 2" "$T/user.out" || fail "the user program says: $(cat "$T/user.out")"
[ -f "$T/user.h5" ] || fail "the user program's HDF5 file is missing"

step "the installed example: cp -r, make (pkg-config), hpc-mpiexec -n 4 ./hello, no LD_LIBRARY_PATH"
ex=$($pc --variable=examplesdir libhpc) || fail "pkg-config --variable=examplesdir libhpc"
[ "$(cd "$ex" && pwd -P)" = "$(cd "$P/share/hpckit/examples" && pwd -P)" ] || fail "examplesdir is $ex"
cp -r "$ex" "$T/ex" && chmod -R u+w "$T/ex"
make -C "$T/ex" > "$T/ex.log" 2>&1 || { cat "$T/ex.log"; fail "the example's Makefile"; }
readelf -d "$T/ex/hello" | grep -q "RUNPATH.*$P/lib" || { readelf -d "$T/ex/hello" | grep PATH; fail "hello has no RUNPATH to $P/lib"; }
for np in 4 2; do
    (cd "$T/ex" && "$P/bin/hpc-mpiexec" -n $np ./hello) > "$T/hello.$np" 2> "$T/hello.err" ||
        { cat "$T/hello.$np" "$T/hello.err"; fail "hpc-mpiexec -n $np ./hello"; }
    [ -s "$T/hello.err" ] && { cat "$T/hello.err"; fail "hello wrote to stderr"; }
    # what the README says it prints: a draw per rank (keyed by index, so
    # the same at any rank count), their sum from rank 0
    python3 - "$T/hello.$np" $np <<'PYEOF' || { cat "$T/hello.$np"; fail "hello's output on $np ranks"; }
import re, sys
text = open(sys.argv[1]).read()
n = int(sys.argv[2])
draws = {int(r): float(x) for r, s, x in re.findall(r"^rank (\d+) of (\d+) on node 0 drew ([0-9.]+)$", text, re.M)
         if int(s) == n}
assert sorted(draws) == list(range(n)), draws
assert all(0 <= x < 1 for x in draws.values())
total = float(re.search(r"^sum over %d ranks: ([0-9.]+)$" % n, text, re.M).group(1))
assert abs(total - sum(draws.values())) < 5e-6 * n, (total, draws)
PYEOF
done
for r in 0 1; do
    [ "$(grep "^rank $r of 2 " "$T/hello.2" | sed 's/.* drew //')" = "$(grep "^rank $r of 4 " "$T/hello.4" | sed 's/.* drew //')" ] ||
        fail "rank $r drew differently on 2 and 4 ranks"
done

step "section-3 man pages: every exported function, each header, libhpc"
m3=$P/share/man/man3
for h in libhpc hpc.h hpc_rng.h hpc_coll.h hpc_h5.h hpc_app.h hpc_dl.h; do
    [ -s "$m3/$h.3" ] || fail "no man page $h(3)"
done
private=$(sed -n 's/^HPC_PRIVATE .*[ *]\(hpc_[a-z0-9_]*\)(.*/\1/p' "$top_srcdir/libhpc/internal.h")
nf=0
for s in $(nm -D --defined-only "$P/lib/libhpc-core.so" "$P/lib/libhpc.so" | awk '$2 == "T" && $3 ~ /^hpc_/ { print $3 }' | sort -u); do
    echo "$private" | grep -qx "$s" && continue
    [ -s "$m3/$s.3" ] || fail "exported $s has no man page (a comment above its declaration makes it)"
    # NAME names it with a description, DESCRIPTION is not empty
    awk -v s="$s" 'p { ok = index(" " $0 ",", " " s ",") || index(" " $0 " ", " " s " "); d = index($0, "\\- ");
        exit !(ok && d && length($0) > d + 3) } /^\.SH NAME/ { p = 1 }' "$m3/$s.3" ||
        { sed -n 1,5p "$m3/$s.3"; fail "$s(3): NAME has no description"; }
    [ -n "$(sed -n '/^\.SH DESCRIPTION/,/^\.SH SEE ALSO/p' "$m3/$s.3" | sed '1d;$d')" ] || fail "$s(3): empty DESCRIPTION"
    nf=$((nf + 1))
done
[ -s "$m3/hpc_rng_uniform.3" ] || fail "no page for hpc_rng.h's inline hpc_rng_uniform"
echo "ok: $nf exported functions, each with its page"

step "bash completion for every program, from its option table"
for p in $progs; do
    c=$P/share/bash-completion/completions/$p.bash
    [ -s "$c" ] || fail "no bash completion $c"
    # every option of the table completes
    for o in $("$P/bin/$p" --list-options | cut -f1); do
        bash -c ". '$c'; COMP_WORDS=($p $o); COMP_CWORD=1; _$(echo $p | tr - _); printf '%s\n' \"\${COMPREPLY[@]}\"" |
            grep -qx -- "$o" || fail "$p's completion does not complete $o"
    done
done

step "man pages, guides, --help's Guide line"
for p in $progs; do
    if [ -n "${HELP2MAN:-}" ]; then
        m=$P/share/man/man1/$p.1
        [ -s "$m" ] || fail "no man page $m"
        grep -q '^\.SH "*OPTIONS\|^\.SH DESCRIPTION' "$m" || fail "$m has no DESCRIPTION"
        grep -q -- '\\-\\-help' "$m" || fail "$m does not list --help"
        grep -q '^\.SH EXAMPLES' "$m" || fail "$m has no EXAMPLES (--help's Examples: section)"
    fi
    g=$("$P/bin/$p" --help 2>/dev/null | sed -n 's/^Guide: \([^ ]*\) .*/\1/p')
    [ -n "$g" ] || fail "$p --help has no Guide line"
    [ -f "$g" ] || fail "$p --help names the guide $g, which does not exist"
    case $g in */../*|*/./*) fail "$p --help names the guide as $g, not a resolved path" ;; esac
    # and where it is in the source tree
    s=$("$P/bin/$p" --help 2>/dev/null | sed -n 's/^Guide: [^ ]* (\([^ ]*\) in the source tree).*/\1/p')
    [ -n "$s" ] && [ -f "$top_srcdir/$s" ] || fail "$p --help names '$s' in the source tree, which does not exist"
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
    # (MANPATH unset, as in a login shell: man must still find the system's pages)
    env -i HOME="$HOME" PATH=/usr/bin:/bin sh -c ". $init; module use $P/share/hpckit/modulefiles && module load hpckit &&
        command -v hpc-info && pkg-config --modversion libhpc && echo \"batch=\$HPCKIT_BATCH\" && man -w hpc-train &&
        man -w hpc_allreduce &&
        echo \"man ls: \$(man -w ls)\" &&
        /usr/bin/python3 -c 'import importlib.util as u; print(\"python:\", u.find_spec(\"hpckit_torch\").origin)' &&
        module unload hpckit && echo \"unloaded: MANPATH=[\${MANPATH:-}] PYTHONPATH=[\${PYTHONPATH:-}]\"" \
        > "$T/module.out" 2>&1 || { cat "$T/module.out"; fail "module load hpckit"; }
    grep -qx "$P/bin/hpc-info" "$T/module.out" || { cat "$T/module.out"; fail "the module does not put $P/bin first on PATH"; }
    grep -qx "batch=$P/share/hpckit/batch" "$T/module.out" || { cat "$T/module.out"; fail "HPCKIT_BATCH"; }
    [ -z "${HELP2MAN:-}" ] || grep -q "$P/share/man/man1/hpc-train.1" "$T/module.out" || { cat "$T/module.out"; fail "MANPATH"; }
    grep -q "^man ls: /" "$T/module.out" || { cat "$T/module.out"; fail "man ls fails after module load hpckit (MANPATH without a trailing ':')"; }
    grep -qx "python: $P/share/hpckit/python/hpckit_torch.py" "$T/module.out" ||
        { cat "$T/module.out"; fail "python3 does not find hpckit_torch after module load hpckit"; }
    grep -qx "unloaded: MANPATH=\[\] PYTHONPATH=\[\]" "$T/module.out" || { cat "$T/module.out"; fail "module unload left MANPATH or PYTHONPATH"; }
    # module help names every program of the build (the one list)
    env -i HOME="$HOME" PATH=/usr/bin:/bin sh -c ". $init; module use $P/share/hpckit/modulefiles && module help hpckit" \
        > "$T/module.out" 2>&1 || { cat "$T/module.out"; fail "module help hpckit"; }
    for p in $progs; do
        grep -q "\b$p[,;]" "$T/module.out" || { cat "$T/module.out"; fail "module help hpckit does not name $p"; }
    done
    # bash completion, found by bash-completion through the module's XDG_DATA_DIRS
    bc=/usr/share/bash-completion/bash_completion
    if [ -f "$bc" ]; then
        env -i HOME="$HOME" PATH=/usr/bin:/bin bash -c ". $init; module use $P/share/hpckit/modulefiles && module load hpckit &&
            . $bc && __load_completion hpc-train && complete -p hpc-train &&
            COMP_WORDS=(hpc-train --act ''); COMP_CWORD=2; _hpc_train; echo \"act: \${COMPREPLY[*]}\";
            COMP_WORDS=(hpc-train --pipe-s); COMP_CWORD=1; _hpc_train; echo \"option: \${COMPREPLY[*]}\"" > "$T/comp.out" 2>&1 ||
            { cat "$T/comp.out"; fail "bash-completion does not load hpc-train's completion after module load hpckit"; }
        grep -q "^complete .*-F _hpc_train hpc-train$" "$T/comp.out" &&
            grep -qx "act: tanh relu gelu" "$T/comp.out" && grep -qx "option: --pipe-schedule" "$T/comp.out" ||
            { cat "$T/comp.out"; fail "hpc-train's completion"; }
    else
        echo "(bash-completion not installed: the completion's loading not checked)"
    fi
    # a second hpckit (another version, another MPI) conflicts with the loaded one
    mkdir -p "$T/other/hpckit"
    cp "$mf/$(ls "$mf" | head -n 1)" "$T/other/hpckit/9.9"
    env -i HOME="$HOME" PATH=/usr/bin:/bin sh -c ". $init; module use $P/share/hpckit/modulefiles && module load hpckit &&
        module use $T/other && module load hpckit/9.9" > "$T/module.out" 2>&1 &&
        { cat "$T/module.out"; fail "a second hpckit loaded beside the first"; }
    grep -q -i "conflict" "$T/module.out" || { cat "$T/module.out"; fail "no conflict named"; }
else
    echo "(Environment Modules not installed: the modulefile was not loaded)"
fi

step "make uninstall: nothing left, not even an empty folder"
mv "$P" "$T/stage$prefix" || fail "moving the prefix back"
make -C "$top_builddir" uninstall DESTDIR="$T/stage" > "$T/uninstall.log" 2>&1 || { tail "$T/uninstall.log"; fail "make uninstall"; }
left=$(find "$T/stage$prefix" -mindepth 1 2>/dev/null)   # the prefix itself stays
# under /usr and /usr/local the standard folders are the system's and stay
# (empty); hpckit's own (share/hpckit, share/doc/hpckit, lib/hpckit) go
case $prefix in /usr | /usr/local) left=$(find "$T/stage$prefix" ! -type d 2>/dev/null; find "$T/stage$prefix" -path '*hpckit*' 2>/dev/null) ;; esac
[ -z "$left" ] || { echo "$left"; fail "make uninstall left the above"; }
echo "install.sh: all checks passed"
