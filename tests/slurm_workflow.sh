#!/bin/sh
# slurm_workflow.sh - the workflow the README sells, end to end, as a user
# runs it: hpckit installed (make install DESTDIR, the prefix then moved,
# reached through its modulefile), jobs submitted from the user's own
# folder to a real private Slurm:
#   1. an hpc-odegen job array of 3 shards and the join job it submits;
#   2. hpc-train on the joined file at 2 ranks (train.sh): its checkpoint
#      equals, array for array, training at 2 ranks on one un-sharded
#      run's file;
#   3. the Python module (share/hpckit/python/hpckit_torch.py) loads the
#      run into PyTorch and reproduces its validation loss;
#   4. a PyTorch model written with the module trains with --init-from
#      (train.sh), starting from exactly those weights;
#   5. the same through pipeline.sh: odegen as an array of 3 shards, its
#      join, then train on the joined file, chained with afterok.
# Skips (77) without Slurm or PyTorch.
top_builddir=$(cd "${top_builddir:-.}" && pwd)   # the jobs run elsewhere
. "$top_srcdir/tests/slurm/cluster.sh"
. "$top_srcdir/tests/train_lib.sh"
need_h5diff
need_torch
FAIL_SHOW="$T/work/*.out $T/work/p/*.out"
step start
slurm_start 4
trap 'slurm_stop; rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # CI runs as root

step "make install DESTDIR, the prefix moved to $T/hpckit"
sh "$top_srcdir/tests/install_lock.sh" "$top_builddir" install DESTDIR="$T/stage" > "$T/install.log" 2>&1 || { tail "$T/install.log"; fail "make install"; }
prefix=$(sed -n "s/^prefix = //p" "$top_builddir/Makefile")
mv "$T/stage$prefix" "$T/hpckit" || fail "moving the prefix"
unset LD_LIBRARY_PATH
# what `module load hpckit` does (tests/install.sh loads the modulefile
# itself): the programs, the scripts' folder, the Python module
P=$T/hpckit
export PATH=$P/bin:$PATH HPC_BIN=$P/bin HPC_BATCH_DIR=$P/share/hpckit/batch
B=$HPC_BATCH_DIR
PYMOD=$P/share/hpckit/python
[ -f "$PYMOD/hpckit_torch.py" ] || fail "hpckit_torch.py not installed in $PYMOD"
mkdir "$T/work" && cd "$T/work" || fail "work folder"
SMALL="--nodes=1 --ntasks-per-node=2 --cpus-per-task=1"
ODE="-s lorenz -n 300 --nt 11 --seed 5"
TRAIN="--layers 4,16,16,3 --batch 64 --steps 60 --eval-every 20 --seed 3"

submit() {   # submit NAME SECONDS SBATCH-ARGS...: run a job to its end, exit 0
    name=$1 secs=$2
    shift 2
    job=$(sbatch --parsable -o "$name.out" "$@") || fail "sbatch $name"
    slurm_wait "$job" "$secs" || fail "$name (job $job): $(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
}

step "1. odegen.sh as a job array of 3 shards, and its join job"
sbatch --parsable $SMALL --array=0-2 -o "arr-%a.out" "$B/odegen.sh" --out "$T/work/ode.h5" $ODE > array.id || fail "sbatch --array"
i=0
until join=$(sed -n 's/^== join job \([0-9]*\) .*/\1/p' arr-0.out 2>/dev/null) && [ -n "$join" ]; do
    i=$((i + 1)); [ $i -gt 240 ] && fail "task 0 submitted no join job"; sleep 0.5
done
slurm_wait "$join" 240 || fail "join job $join: $(scontrol -o show job "$join" | grep -o 'JobState=[A-Z]*')"
[ -f ode.h5 ] && [ -f ode-shard0002-of0003.h5 ] || fail "no joined ode.h5 beside its shards"
# the reference: one un-sharded run of the same options
"$MPIEXEC_WRAP" -n 2 "$P/bin/hpc-odegen" -q $ODE --out "$T/one.h5" || fail "the un-sharded run"

step "2. train.sh on the joined file, 2 ranks; the same on the un-sharded file"
submit train 240 $SMALL "$B/train.sh" --data "$T/work/ode.h5" --out "$T/work/t1" $TRAIN
[ -f t1/checkpoint.h5 ] || fail "train.sh left no checkpoint"
"$MPIEXEC_WRAP" -n 2 "$P/bin/hpc-train" -q --data "$T/one.h5" --out "$T/ref" $TRAIN || fail "training on the un-sharded file"
for d in $("$PYTHON" -c "import h5py,sys
f=h5py.File(sys.argv[1],'r'); n=[]
f.visititems(lambda k,v: n.append(k) if isinstance(v,h5py.Dataset) else None)
print(' '.join(n))" t1/checkpoint.h5); do
    "$H5DIFF" -q "$T/ref/checkpoint.h5" t1/checkpoint.h5 "/$d" "/$d" ||
        fail "the checkpoint of the joined file's run differs from the un-sharded file's in /$d"
done
echo "checkpoints equal: joined job array = one run, at 2 ranks"

step "3. the Python module loads the run and reproduces its validation loss"
"$PYTHON" - "$PYMOD" "$T/work/t1" "$T/work/init.h5" > py.out 2>&1 <<'PY' || { cat py.out; fail "hpckit_torch on the run"; }
import sys
sys.path.insert(0, sys.argv[1])
import torch
import hpckit_torch as hk
model, norm, meta = hk.load(sys.argv[2])
x, y = hk.samples(meta, "val")
with torch.no_grad():
    loss = torch.nn.functional.mse_loss(model(norm.inputs(x)), norm.targets(y)).item()
rel = abs(loss - meta["val_loss"]) / meta["val_loss"]
print(f"val loss {loss:.8g}, the run's {meta['val_loss']:.8g}, relative difference {rel:.2g}")
assert rel < 1e-6, "the loaded model does not reproduce the run's validation loss"
assert meta["val_samples"] == len(x), "val_samples"
# 4.'s init file: a model of the same shape, PyTorch's own initialisation
torch.manual_seed(11)
hk.save_init(hk.build_model([4, 16, 16, 3]), sys.argv[3])
print("init file written")
PY
cat py.out

step "4. train.sh --init-from the PyTorch model"
submit init 240 $SMALL "$B/train.sh" --data "$T/work/ode.h5" --out "$T/work/t2" $TRAIN --init-from "$T/work/init.h5"
"$PYTHON" - "$T/work/t2/checkpoint.h5" "$T/work/init.h5" "$T/work/t1/checkpoint.h5" <<'PY' || fail "the --init-from run"
import sys, h5py, numpy as np
ck, init, t1 = (h5py.File(p, "r") for p in sys.argv[1:4])
assert ck.attrs["init_from"] == sys.argv[2] or str(ck.attrs["init_from"]).endswith("init.h5"), ck.attrs["init_from"]
assert int(ck.attrs["step"]) == 60
# it trained from the init file's weights, not from hpc-train's own
moved = [float(np.abs(ck[f"model/{i}/weight"][()] - init[f"model/{i}/weight"][()]).max()) for i in init["model"]]
other = [float(np.abs(ck[f"model/{i}/weight"][()] - t1[f"model/{i}/weight"][()]).max()) for i in init["model"]]
assert all(0 < m < 0.5 for m in moved), moved
assert all(o > 0 for o in other), other
assert np.isfinite(ck.attrs["val_loss"])
print("--init-from trained from the PyTorch weights: largest change", max(moved))
PY

step "5. pipeline.sh: odegen as 3 shards, their join, train on the joined file"
"$B/pipeline.sh" --run p --chain odegen,train --sbatch "$SMALL" --odegen-array 3 \
    --odegen "--out $T/work/p/ode.h5 $ODE" --train "--data $T/work/p/ode.h5 --out $T/work/p/train $TRAIN" \
    > pipe.log 2>&1 || { cat pipe.log; fail "pipeline.sh"; }
cat pipe.log
last=$(sed -n 's/^== train: job \([0-9]*\).*/\1/p' pipe.log)
joinp=$(sed -n 's/^== odegen-join: job \([0-9]*\).*/\1/p' pipe.log)
[ -n "$last" ] && [ -n "$joinp" ] || fail "pipeline.sh printed no job ids"
slurm_wait "$last" 300 || fail "the pipeline's train job $last: $(scontrol -o show job "$last" | grep -o 'JobState=[A-Z]*')"
"$H5DIFF" -q "$T/ref/checkpoint.h5" p/train/checkpoint.h5 /model /model ||
    fail "the pipeline's model differs from training on the un-sharded file"
grep -q "join job" p/odegen-*_0.out && fail "a task of the pipeline's array submitted a join of its own"
step done
echo "slurm_workflow.sh: job array -> join -> train -> PyTorch -> --init-from, all passed"
