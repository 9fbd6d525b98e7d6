#!/bin/sh
# slurm_batch.sh - the batch scripts as users run them: installed by `make
# install` into a temporary prefix and submitted from a folder outside the
# source tree, on a real Slurm started by this test.  info.sh, matmul.sh,
# collbench.sh (their run folders), a copy of a script with its #SBATCH
# lines edited, a job array of odegen.sh whose join equals one big run, a
# sparse array (--array=1,3,5) that every task refuses, and pipeline.sh
# chaining jobs.  Skips (77) without Slurm.
top_builddir=$(cd "${top_builddir:-.}" && pwd)   # the jobs run elsewhere
. "$top_srcdir/tests/slurm/cluster.sh"
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
FAIL_SHOW=$T/work/*.out
step start
slurm_start 4
trap 'slurm_stop; rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # CI runs as root

step "make install into $T/inst"
# a prefix other than configure's: libtool refuses to relink a library
# that links another of ours (libhpc.so, libhpc-mpi.so, the GPU modules:
# they link the installed libhpc-core) into it, so only libhpc-core is
# installed by make, libhpc.so copied beside it from the build (it finds
# libhpc-core through LD_LIBRARY_PATH, below); the scripts need no more
make -C "$top_builddir" install prefix="$T/inst" lib_LTLIBRARIES=libhpc/libhpc-core.la pkglib_LTLIBRARIES= \
    > "$T/install.log" 2>&1 || { tail "$T/install.log"; fail "make install"; }
cp -P "$top_builddir"/libhpc/.libs/libhpc.so* "$T/inst/lib/" || fail "copying libhpc.so"
B=$T/inst/share/hpckit/batch
# the programs' run path is the configured prefix's, not this one's
export LD_LIBRARY_PATH=$T/inst/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for s in info odegen train matmul collbench pipeline common; do [ -x "$B/$s.sh" ] || fail "$B/$s.sh not installed"; done
mkdir "$T/work" && cd "$T/work" || fail "work folder"
# the test node has 4 CPUs: smaller jobs than the scripts' defaults
SMALL="--nodes=1 --ntasks-per-node=2 --cpus-per-task=1"

run_job() {   # run_job NAME SECONDS SBATCH-ARGS...: submit, wait, must complete
    name=$1 secs=$2
    shift 2
    job=$(sbatch --parsable -o "$name.out" "$@") || fail "sbatch $name"
    slurm_wait "$job" "$secs" || fail "$name (job $job): $(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
}

step "info.sh"
run_job info 120 --nodes=1 --ntasks-per-node=3 --cpus-per-task=1 "$B/info.sh"
[ "$(grep -c -E '^ +[0-9]+  ' info.out)" -ge 3 ] && grep -q -E '^selftest: .* 0 failed' info.out || fail "info.sh output"

step "matmul.sh, and a user's copy with its #SBATCH lines edited"
run_job mm 120 $SMALL "$B/matmul.sh" --gen 64,48,40 --verify --out c.h5:/C
grep -q 'verify passed' mm.out && [ -f c.h5 ] || fail "matmul.sh: no verified product"
[ -s runs/hpc-matmul-$job/command.txt ] && [ -s runs/hpc-matmul-$job/placement.txt ] || fail "matmul.sh: run folder"
sed -e 's/^#SBATCH --job-name=hpc-matmul/#SBATCH --job-name=my-product/' "$B/matmul.sh" > mine.sh
run_job mine 120 $SMALL mine.sh --gen 30,30,30 --verify
grep -q 'verify passed' mine.out && [ -d runs/my-product-$job ] || fail "a copied and edited script"

step "collbench.sh"
run_job cb 120 $SMALL "$B/collbench.sh" -c allreduce -b 8 -e 1K -f 4 --check
grep -q '^# summary' cb.out && [ -s runs/hpc-collbench-$job/collbench.csv ] || fail "collbench.sh: no table in the run folder"

step "odegen.sh as a job array of 3 shards, joined"
ARGS="-n 600 --nt 11 --seed 2 -s lorenz"
odegen 2 -q $ARGS --out "$T/one.h5" || fail "reference run"
mkdir arr
array=$(sbatch --parsable $SMALL --array=0-2 -o "arr-%a.out" "$B/odegen.sh" --out arr/ode.h5 $ARGS) || fail "sbatch --array"
i=0
until join=$(sed -n 's/^== join job \([0-9]*\) .*/\1/p' arr-0.out 2>/dev/null) && [ -n "$join" ]; do
    i=$((i + 1)); [ $i -gt 240 ] && fail "task 0 submitted no join job"; sleep 0.5
done
slurm_wait "$join" 240 || fail "join job $join: $(scontrol -o show job "$join" | grep -o 'JobState=[A-Z]*')"
for d in /t /x0 /y /stats/nsteps /stats/nfev /stats/nrejected /stats/status; do
    "$H5DIFF" -q "$T/one.h5" arr/ode.h5 $d $d || fail "array: joined $d differs from one run"
done
echo "array job $array joined by job $join: equal to one run"

step "odegen.sh as a sparse array (--array=1,3,5): every task refuses, nothing runs"
mkdir sparse
sparse=$(sbatch --parsable $SMALL --array=1,3,5 -o "sparse-%a.out" "$B/odegen.sh" --out sparse/ode.h5 $ARGS) ||
    fail "sbatch --array=1,3,5"
slurm_wait "$sparse" 120 && fail "the sparse array succeeded"
for id in 1 3 5; do
    grep -q "batch/odegen.sh: cannot tell task $id's shard.*--array=0-2" "sparse-$id.out" ||
        fail "sparse task $id: no refusal naming --array=0-2 in sparse-$id.out"
    scontrol -o show job "${sparse}_$id" | grep -q 'ExitCode=2:0' || fail "sparse task $id: not exit 2"
done
[ -z "$(ls sparse)" ] && ! grep -q "join job" sparse-*.out || fail "the sparse array wrote or submitted something"
echo "sparse array job $sparse: every task refused ($(grep -h 'cannot tell' sparse-1.out))"

step "pipeline.sh: odegen -> matmul"
"$B/pipeline.sh" --run pipe --chain odegen,matmul --sbatch "$SMALL" --odegen "--out $T/work/pipe/ode.h5 -n 400 --nt 11" \
    --matmul "--gen 64,64,64 --verify --out $T/work/pipe/c.h5:/C" > pipe.log 2>&1 || { cat pipe.log; fail "pipeline.sh"; }
last=$(sed -n 's/^== matmul: job \([0-9]*\).*/\1/p' pipe.log)
first=$(sed -n 's/^== odegen: job \([0-9]*\).*/\1/p' pipe.log)
[ -n "$last" ] && [ -n "$first" ] || { cat pipe.log; fail "pipeline.sh printed no job ids"; }
scontrol -o show job "$last" | grep -q "Dependency=afterok:$first" || scontrol -o show job "$last" | grep -q 'JobState=COMPLETED' ||
    fail "matmul job does not depend on the odegen job"
slurm_wait "$last" 240 || fail "pipeline's last job $last"
[ -f pipe/ode.h5 ] && [ -f pipe/c.h5 ] || fail "pipeline outputs"

step "pipeline.sh: relative paths are the run folder's; a failed step cancels the rest"
# relative --out: in the run folder, as --help says (the steps run there)
"$B/pipeline.sh" --run pipe2 --chain odegen,matmul --sbatch "$SMALL" --odegen "--out rel.h5 -n 40 --nt 5" \
    --matmul "--gen 32,32,32 --verify --out rel-c.h5:/C" > pipe2.log 2>&1 || { cat pipe2.log; fail "pipeline.sh, relative paths"; }
last=$(sed -n 's/^== matmul: job \([0-9]*\).*/\1/p' pipe2.log)
slurm_wait "$last" 240 || fail "pipeline (relative paths): last job $last"
[ -f pipe2/rel.h5 ] && [ -f pipe2/rel-c.h5 ] || { ls -R pipe2; fail "relative paths did not land in the run folder"; }
[ ! -e rel.h5 ] && [ ! -e rel-c.h5 ] || fail "relative paths landed in the submit folder"
# odegen refuses its options (exit 2): train and matmul must not wait for ever
"$B/pipeline.sh" --run pipe3 --sbatch "$SMALL" --odegen "--out ode.h5 -n 0" > pipe3.log 2>&1 || { cat pipe3.log; fail "pipeline.sh (failing)"; }
for s in train matmul; do
    j=$(sed -n "s/^== $s: job \([0-9]*\).*/\1/p" pipe3.log)
    [ -n "$j" ] || { cat pipe3.log; fail "no $s job"; }
    i=0
    while scontrol -o show job "$j" 2>/dev/null | grep -q 'JobState=PENDING'; do
        i=$((i + 1))
        [ $i -gt 120 ] && fail "$s job $j still pending 60 s after odegen failed: $(scontrol -o show job "$j" | grep -o 'Reason=[^ ]*')"
        sleep 0.5
    done
    scontrol -o show job "$j" 2>/dev/null | grep -q 'JobState=\(CANCELLED\|FAILED\)' || [ -z "$(scontrol -o show job "$j" 2>/dev/null)" ] ||
        fail "$s job $j: $(scontrol -o show job "$j" | grep -o 'JobState=[A-Z]*')"
done
[ ! -e pipe3/train ] || [ -z "$(ls pipe3/train)" ] || fail "the train step ran after a failed odegen"
echo "ok: after the failed odegen, the train and matmul jobs were cancelled"
step done
echo "slurm_batch.sh: all checks passed"
