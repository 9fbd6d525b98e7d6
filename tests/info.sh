#!/bin/sh
# info.sh - hpc-info at 1 and 3 ranks: one table row per rank, valid JSON
# with the right ranks, --help, and one-line errors with the right status.
info=$top_builddir/apps/info/hpc-info
tmp=${TMPDIR:-/tmp}/hpc_info_test.$$
mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp"/out "$tmp"/err 2>/dev/null; exit 1; }
py=${PYTHON_SCI:-python3}

for np in 1 3; do
    $MPIEXEC_WRAP -n $np "$info" >"$tmp/out" 2>"$tmp/err" || fail "hpc-info on $np ranks"
    rows=$(grep -c -E '^ +[0-9]+  ' "$tmp/out")
    [ "$rows" = "$np" ] || fail "$np ranks: $rows table rows"
    grep -q '^MPI: ' "$tmp/out" || fail "no MPI line"
    $MPIEXEC_WRAP -n $np "$info" --json >"$tmp/out" 2>"$tmp/err" || fail "--json on $np ranks"
    # the build's CUDA and NCCL, as configure wrote them into config.h
    cuda=$(grep -c '^#define HPC_HAVE_CUDA 1' "$top_builddir/config.h")
    nccl=$(grep -c '^#define HPC_HAVE_NCCL 1' "$top_builddir/config.h")
    $py - "$tmp/out" $np $cuda $nccl <<'PYEOF' || fail "JSON on $np ranks"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert d["build"] == {"cuda": sys.argv[3] == "1", "nccl": sys.argv[4] == "1"}, d.get("build")
assert isinstance(d["cuda_aware_mpi"], bool), d.get("cuda_aware_mpi")
assert [r["rank"] for r in d["ranks"]] == list(range(n)), d["ranks"]
assert [r["local_rank"] for r in d["ranks"]] == list(range(n))
assert all(r["node"] == 0 and r["threads"] >= 1 and r["ncores"] >= 1 for r in d["ranks"])
assert d["mpi"] and d["launcher"] in ("none", "hydra", "openmpi"), d["launcher"]
if n > 1:
    assert d["launcher"] != "none"
PYEOF
done

# --json --selftest: still one JSON object, the self-test's counts in it
$MPIEXEC_WRAP -n 2 "$info" --json --selftest >"$tmp/out" 2>"$tmp/err" || fail "--json --selftest"
$py - "$tmp/out" <<'PYEOF' || fail "--json --selftest is not one JSON object with the counts"
import json, sys
d = json.load(open(sys.argv[1]))
st = d["selftest"]
assert st["cases"] > 100 and st["failed"] == 0 and st["passed"] == st["cases"], st
assert [r["rank"] for r in d["ranks"]] == [0, 1]
PYEOF

# 3 ranks on 2 cores share them: the warning says so
nc=$(nproc)
if [ "$nc" -lt 3 ]; then
    $MPIEXEC_WRAP -n 3 "$info" >"$tmp/out" 2>&1
    grep -q 'share cores' "$tmp/out" || fail "no core-sharing warning with 3 ranks on $nc cores"
fi

# a launcher that says something else than MPI: a warning naming both
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 "$info" >"$tmp/out" 2>"$tmp/err" || fail "torchrun-style singleton"
grep -q 'launcher (torchrun) and MPI disagree: rank 1 vs 0 size 2 vs 1' "$tmp/err" || fail "no mismatch warning"
grep -q '^warning: 1 rank(s): launcher and MPI disagree' "$tmp/out" || fail "no mismatch line in the table"
# log lines carry elapsed time and rank; debug shows what hpc_init chose
HPC_LOG=debug "$info" >"$tmp/out" 2>"$tmp/err" || fail "HPC_LOG=debug"
grep -q -E '^\[ *[0-9]+\.[0-9]{3}s\] rank 0: debug: hpc_init: rank 0/1' "$tmp/err" || fail "debug log line"
# user-set threads are kept
OMP_NUM_THREADS=3 "$info" --json >"$tmp/out" 2>"$tmp/err" || fail "OMP_NUM_THREADS"
grep -q '"threads": 3' "$tmp/out" || fail "OMP_NUM_THREADS=3 not honoured"

"$info" --help >"$tmp/out" 2>&1 || fail "--help exit status"
grep -q '^Usage: hpc-info' "$tmp/out" || fail "--help text"

# bad input: one line on stderr, from one rank, exit 2 (or $want)
check_bad() {
    what=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc = "${want:-2}" ] || fail "$what: exit $rc, want ${want:-2}"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$what: $(wc -l <"$tmp/err") lines on stderr, want 1"
    grep -q -e "$pattern" "$tmp/err" || fail "$what: message lacks '$pattern'"
}
pattern="unknown option '--bogus'"
check_bad "--bogus on 3 ranks" $MPIEXEC_WRAP -n 3 "$info" --bogus
pattern="HPC_GPU_BIND='sideways'"
HPC_GPU_BIND=sideways check_bad "bad HPC_GPU_BIND" $MPIEXEC_WRAP -n 2 "$info"
pattern="unexpected argument 'extra'"
check_bad "stray argument" "$info" extra
pattern="--device goes with --selftest"
check_bad "--device alone" "$info" --device
pattern="choose one"
check_bad "--json --verbose" "$info" --json --selftest -v
# the user asked for device buffers: no GPU is a request this node cannot
# serve (exit 2, as a bad option), not a quiet skip; the line says why
pattern="^hpc-info: --device: rank 0 ([^)]*): no "
CUDA_VISIBLE_DEVICES= check_bad "--selftest --device without a GPU" $MPIEXEC_WRAP -n 2 "$info" --selftest --device
pattern="^hpc-info: HPC_COLL_ALLREDUCE=nccl: rank 0 ([^)]*): no "
CUDA_VISIBLE_DEVICES= HPC_COLL_ALLREDUCE=nccl check_bad "HPC_COLL_ALLREDUCE=nccl without a GPU" \
    $MPIEXEC_WRAP -n 2 "$info"
echo "info.sh: all checks passed"
