# odegen_lib.sh - shared by the tests/odegen_*.sh scripts (sourced).
#
# Provides: $ODEGEN (the program), $T (a scratch folder removed at exit),
# odegen NP ARGS... (run on NP ranks through the configure-chosen
# launcher), same_data A B (bitwise comparison of every dataset), fail MSG,
# $H5DIFF, need_h5diff (tests/testlib.sh).
. "${top_srcdir:-.}/tests/testlib.sh" odegen
ODEGEN=$top_builddir/apps/odegen/hpc-odegen
# compiled systems: one cache for every test of this build tree (the lock
# keeps parallel tests apart), so each file is compiled once per build
HPC_ODEGEN_CACHE=${HPC_ODEGEN_CACHE:-$(cd "$top_builddir" && pwd)/tests/odegen-cache}
export HPC_ODEGEN_CACHE
# every dataset of an hpc-odegen file (attributes are compared separately)
ODEGEN_DATASETS="/t /x0 /y /traj /component /stats/nsteps /stats/nfev /stats/nrejected /stats/status /stats/done /stats/written /stats/chunk"

odegen() {
    np=$1
    shift
    "$MPIEXEC_WRAP" -n "$np" "$ODEGEN" "$@"
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
