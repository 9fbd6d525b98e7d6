# odegen_lib.sh - shared by the tests/odegen_*.sh scripts (sourced).
#
# Provides: $ODEGEN (the program), $T (a scratch folder removed at exit),
# odegen NP ARGS... (run on NP ranks through the configure-chosen
# launcher), same_data A B (bitwise comparison of every dataset), fail MSG.
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
ODEGEN=$top_builddir/apps/odegen/hpc-odegen
MPIEXEC_WRAP=${MPIEXEC_WRAP:-$top_builddir/tests/mpiexec-wrap}
T=$(mktemp -d "${TMPDIR:-/tmp}/odegen-test.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
# every dataset of an hpc-odegen file (attributes are compared separately)
ODEGEN_DATASETS="/t /x0 /y /stats/nsteps /stats/nfev /stats/nrejected /stats/status /stats/done"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

odegen() {
    np=$1
    shift
    "$MPIEXEC_WRAP" -n "$np" "$ODEGEN" "$@"
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

# same_data A B: every dataset equal bit for bit (h5diff without -d/-p
# compares exactly; NaN rows would count as different, so tests that use
# this avoid failures).
same_data() {
    for d in $ODEGEN_DATASETS; do
        "$H5DIFF" -q "$1" "$2" "$d" "$d" || { echo "dataset $d differs: $1 $2" >&2; return 1; }
    done
}

# The root attributes, less those that legitimately differ between runs
# that produce the same data (when, how many ranks, how long, the command
# line used, how many runs it took).
ODEGEN_VOLATILE="command_line created ranks wall_time runs resume_command_line"
stable_attrs() {
    "$H5DUMP" -A -g / "$1" 2>/dev/null | awk -v vol="$ODEGEN_VOLATILE" '
        NR == 1 { next }   # the file name
        BEGIN { n = split(vol, v, " "); for (i = 1; i <= n; i++) skip["\"" v[i] "\""] = 1 }
        /^   ATTRIBUTE / { drop = ($2 in skip) }
        /^   [A-Z]/ && !/^   ATTRIBUTE / { drop = 0 }
        !drop { print }'
}
