#!/bin/sh
# docs_run.sh - every command block of README.md and docs/*.md runs as
# written (issue 28), from an install as a user has it: `make install`
# into a scratch prefix, reached as $HOME/hpckit (the prefix the docs
# name), and `module load hpckit` in a login-like environment (env -i:
# nothing of the build tree, the harness or the caller's shell); or, where
# Environment Modules is missing, PATH and PKG_CONFIG_PATH set by hand.
# tests/docs_run.py runs the blocks (see it for the marks a page may
# carry: skip REASON, file NAME, exit N, "# make check: OLD -> NEW");
# new pages in docs/ are picked up as they come.
#
#   DOCS_ONLY="train.md:401 ..." runs only those blocks (for a page's author)
. "$top_srcdir/tests/testlib.sh" docs_run
py=${PYTHON_SCI:-}
[ -n "$py" ] || { echo "SKIP: no Python with numpy, scipy, h5py (PYTHON_SCI)"; exit 77; }
src=$(cd "$top_srcdir" && pwd)

step "make install DESTDIR=$T/stage"
# (tests/install_lock.sh: one make install in the build tree at a time)
sh "$top_srcdir/tests/install_lock.sh" "$top_builddir" install DESTDIR="$T/stage" > "$T/install.log" 2>&1 ||
    { tail "$T/install.log"; fail "make install"; }
prefix=$(sed -n "s/^prefix = //p" "$top_builddir/Makefile")
P=$T/stage$prefix
[ -x "$P/bin/hpc-info" ] || fail "nothing installed under $P"
mkdir -p "$T/home"
ln -s "$P" "$T/home/hpckit"

init=/usr/share/modules/init/bash
if [ -f "$init" ]; then
    setup=". $init && module use \$HOME/hpckit/share/hpckit/modulefiles && module load hpckit"
else
    setup="export PATH=\$HOME/hpckit/bin:\$PATH PKG_CONFIG_PATH=\$HOME/hpckit/lib/pkgconfig"
    setup="$setup PYTHONPATH=\$HOME/hpckit/share/hpckit/python HPCKIT_BATCH=\$HOME/hpckit/share/hpckit/batch"
fi
only=
for b in ${DOCS_ONLY:-}; do only="$only --only $b"; done
# the programs' --help Examples are docs too
progs=$(cd "$P/bin" && ls hpc-* | grep -v '^hpc-mpiexec$' | tr '\n' ' ')

step "the docs' blocks, from $P"
# PREFIX: the docs' name for the install folder
env -i HOME="$T/home" PATH=/usr/bin:/bin TMPDIR="${TMPDIR:-/tmp}" LANG=C.UTF-8 USER="${USER:-root}" \
    PREFIX="$T/home/hpckit" PYTHON="$py" \
    bash -c "$setup && exec \"$py\" \"$src/tests/docs_run.py\" --tree \"$src\" --help-examples \"$progs\" $only \"$T/work\" \"$src/README.md\" \"$src\"/docs/*.md" \
    > "$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc = 0 ] || fail "a docs block failed (above)"
grep -q '^docs_run: [0-9]* block(s) ran' "$T/out" || fail "no count"
# the README's program is the one installed as the example
if [ -z "${DOCS_ONLY:-}" ]; then
    cmp "$T/work/README_md/hello.c" "$P/share/hpckit/examples/hello.c" ||
        fail "the README's hello.c is not PREFIX/share/hpckit/examples/hello.c"
fi
step "done"
echo "docs_run.sh: all checks passed"
