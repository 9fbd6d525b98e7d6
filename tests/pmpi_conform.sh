#!/bin/sh
# pmpi_conform.sh - libhpc-mpi.so under pmpi_conform, a plain MPI program
# using what MPI allows of datatypes in collectives (see pmpi_conform.c),
# with each algorithm forced in turn (issue 22).
#
#   tests/pmpi_conform.sh           make check: every algorithm at 2, 3 and
#                                   5 ranks, auto at 1-7 ranks
#   tests/pmpi_conform.sh --full    by hand: every algorithm at 1-7 ranks
#
# By hand, from the build folder: top_builddir=. top_srcdir=../..
# MPIEXEC_WRAP=tests/mpiexec-wrap sh ../../tests/pmpi_conform.sh --full
# Another build's drop-in: PMPI_CONFORM_LIB=/path/to/libhpc-mpi.so and
# PMPI_CONFORM_LIBDIR=the folder of the libhpc.so it goes with.
#
# "Every algorithm": each name hpc-collbench --help lists for some
# collective (the registry's), nccl aside; a run forces it on every
# collective that has it (HPC_COLL_<OP>) and leaves the others on auto;
# hier runs on two fake nodes (HPC_NODE_SPLIT=odd-even).  Each run: the
# program's known answers, exit 0 within the time limit (timeout(1) via
# the test launcher, HPC_TIMEOUT for libhpc's own waits), and every
# data-movement call decided by hpckit (HPC_MPI_VERBOSE: served, or under
# auto given to MPI's own collective by its choice, none fell through to
# MPI - every rank must make the same choice, whatever its datatypes; a
# forced algorithm always served).
top_builddir=${top_builddir:-.}
MPIEXEC_WRAP=${MPIEXEC_WRAP:-$top_builddir/tests/mpiexec-wrap}
lib=${PMPI_CONFORM_LIB:-$top_builddir/libhpc/mpi/.libs/libhpc-mpi.so}
prog=$top_builddir/tests/pmpi_conform
bench=$top_builddir/apps/collbench/hpc-collbench
tmp=${TMPDIR:-/tmp}/hpc_pmpi_conform.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "FAIL: no $lib"; exit 1; }
[ -x "$prog" ] || { echo "FAIL: no $prog"; exit 1; }
export LD_LIBRARY_PATH=${PMPI_CONFORM_LIBDIR:-$top_builddir/libhpc/.libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
limit=${HPC_TEST_TIMEOUT:-90}

# without the drop-in: the test itself is right
$MPIEXEC_WRAP -n 3 "$prog" >"$tmp/out" 2>&1 || { echo "FAIL: pmpi_conform without libhpc-mpi.so"; tail -20 "$tmp/out"; exit 1; }

# the algorithms per collective, from the registry: "  bcast   native, nccl, linear, ..."
$MPIEXEC_WRAP -n 1 "$bench" --help >"$tmp/help" 2>&1 || { echo "FAIL: hpc-collbench --help"; cat "$tmp/help"; exit 1; }
sed -n '/^Algorithms per collective/,/^$/p' "$tmp/help" | grep '^  [a-z]' | tr -d ',' >"$tmp/algs"
[ "$(wc -l <"$tmp/algs")" -ge 9 ] || { echo "FAIL: no algorithm table in hpc-collbench --help"; cat "$tmp/help"; exit 1; }
algs=$(awk '{for (i = 2; i <= NF; i++) if ($i != "nccl") print $i}' "$tmp/algs" | awk '!seen[$0]++')

# the HPC_COLL_<OP>=alg settings that force alg wherever it exists
force() {
    awk -v a="$1" '{for (i = 2; i <= NF; i++) if ($i == a) printf "HPC_COLL_%s=%s ", toupper($1), a}' "$tmp/algs"
}

nfail=0 nrun=0
run() {   # run NP ALG
    np=$1 alg=$2 vars=
    [ "$alg" = auto ] || vars=$(force "$alg")
    [ "$alg" = hier ] && vars="$vars HPC_NODE_SPLIT=odd-even"
    nrun=$((nrun + 1)) t0=$(date +%s)
    # shellcheck disable=SC2086
    env $vars LD_PRELOAD="$lib" HPC_MPI_VERBOSE=1 HPC_TIMEOUT=20 HPC_TEST_TIMEOUT=$limit \
        $MPIEXEC_WRAP -n "$np" "$prog" >"$tmp/out" 2>&1
    st=$? why=
    line=$(grep '^hpc-mpi: hpckit served' "$tmp/out")
    if [ $st -eq 124 ] || [ $st -eq 137 ]; then why="hung (killed after ${limit}s)"
    elif [ $st -ne 0 ]; then why="exit $st"
    elif ! grep -q "pmpi_conform: $np ranks, 0 failures" "$tmp/out"; then why="no result line"
    elif [ -z "$line" ]; then why="no HPC_MPI_VERBOSE line"
    else
        # served/given/fell: none fell through; one forced is never given
        for c in bcast gather scatter allgather alltoall; do
            tri=$(echo "$line" | grep -Eo " $c [0-9]+/[0-9]+/[0-9]+" | awk '{print $2}')
            sv=${tri%%/*} rest=${tri#*/}
            gv=${rest%%/*} fl=${rest#*/}
            if [ -z "$tri" ] || [ "$fl" != 0 ] || [ $((sv + gv)) -eq 0 ]; then why="$why $c not all decided by hpckit;"
            else
                case " $vars " in *" HPC_COLL_$(echo "$c" | tr a-z A-Z)="*) [ "$gv" = 0 ] || why="$why $c forced, but given to MPI;" ;; esac
            fi
        done
    fi
    if [ -n "$why" ]; then
        nfail=$((nfail + 1))
        echo "FAIL: $np ranks, $alg ($vars): $why"
        grep -v '^ *$' "$tmp/out" | head -12 | sed 's/^/    /'
        [ -n "$line" ] && echo "    $line"
    else
        echo "ok: $np ranks, $alg ($(( $(date +%s) - t0 )) s)"
    fi
}

if [ "$1" = --full ]; then
    for np in 1 2 3 4 5 6 7; do
        for alg in auto $algs; do run $np $alg; done
    done
else
    for np in 2 3 5; do
        for alg in auto $algs; do run $np $alg; done
    done
    for np in 1 4 6 7; do run $np auto; done
fi
echo "$nrun runs, $nfail failed (algorithms: $(echo $algs))"
[ $nfail -eq 0 ]
