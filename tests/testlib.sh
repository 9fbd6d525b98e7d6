# testlib.sh - shared by the test scripts' libraries (tests/odegen_lib.sh,
# tests/train_lib.sh; sourced): the paths, a scratch folder, failing, and
# the HDF5 tools.
#
# Provides: $T (a scratch folder removed at exit, named after $1), fail
# MSG (then the tails of the files $FAIL_SHOW names, globs allowed: job
# outputs, daemon logs), step MSG (a timestamped line), $H5DIFF and
# need_h5diff (skips without it).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
MPIEXEC_WRAP=${MPIEXEC_WRAP:-$top_builddir/tests/mpiexec-wrap}
T=$(mktemp -d "${TMPDIR:-/tmp}/${1:-hpc}-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

FAIL_SHOW=
fail() {
    echo "FAIL: $*" >&2
    shown=
    for f in $FAIL_SHOW; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; shown=1; }; done
    # again below the tails: CI keeps a log's end, and the tails pushed the
    # line out of it once (a cluster_box failure showed only daemon logs)
    [ -z "$shown" ] || echo "FAIL: $*" >&2
    exit 1
}
step() { echo "[$(date +%T)] $*"; }
# la_var LA NAME: a variable of libtool's LA file (dlname: the soname it
# built, which moves with the version; libdir)
la_var() { sed -n "s/^$2='\(.*\)'\$/\1/p" "$1"; }

# one_line_error RC CODE WHAT PROGRAM: a run that exited RC with $T/stderr
# must have failed with CODE and one line "PROGRAM: ..." (bad input's rule)
one_line_error() {
    [ "$1" = "$2" ] || { cat "$T/stderr" >&2; fail "$3: exit $1, expected $2"; }
    lines=$(grep -c . "$T/stderr")
    [ "$lines" = 1 ] || { cat "$T/stderr" >&2; fail "$3: $lines lines on stderr, expected 1"; }
    grep -q "^$4: " "$T/stderr" || fail "$3: the line does not name $4"
}

# h5diff from the same tools as h5dump
H5DIFF=${H5DIFF:-}
if [ -z "$H5DIFF" ]; then
    if [ -n "$H5DUMP" ] && [ -x "$(dirname "$H5DUMP")/h5diff" ]; then
        H5DIFF=$(dirname "$H5DUMP")/h5diff
    else
        H5DIFF=$(command -v h5diff || true)
    fi
fi

need_h5diff() {
    [ -n "$H5DIFF" ] || { echo "SKIP: h5diff not found (hdf5-tools)"; exit 77; }
}
