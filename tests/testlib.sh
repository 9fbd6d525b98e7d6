# testlib.sh - shared by the test scripts' libraries (tests/odegen_lib.sh,
# tests/train_lib.sh; sourced): the paths, a scratch folder, failing, and
# the HDF5 tools.
#
# Provides: $T (a scratch folder removed at exit, named after $1), fail
# MSG, $H5DIFF and need_h5diff (skips without it).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
MPIEXEC_WRAP=${MPIEXEC_WRAP:-$top_builddir/tests/mpiexec-wrap}
T=$(mktemp -d "${TMPDIR:-/tmp}/${1:-hpc}-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
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
