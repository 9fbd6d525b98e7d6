"""hpckit_torch.py - the Python module hpckit_torch against hpc-train and
PyTorch (tests/hpckit_torch.sh).

  1. load(): a run folder as (model, normaliser, metadata); the model on the
     run's validation split (samples(), from the plain attributes target,
     val_from_row) reproduces the validation loss the run reported to 1e-6
     relative and its validation MSE in data units to 1e-5; the split's
     sizes are the attributes train_samples, val_samples.  /X,/Y data,
     hpc-odegen data (next and delta, failed trajectories skipped),
     cross-entropy.
  2. save_init(): a PyTorch model written as an init file; hpc-train
     --init-from it with --epochs 0 holds exactly its weights.
  3. --init-from, then 12 steps of hpc-train against 12 steps of PyTorch
     from the same model (Adam and SGD with momentum): every step's loss
     and the final parameters.
  4. load_optimizer_state(): PyTorch continues hpc-train's checkpoint of
     step 10 (model and optimiser state) to step 20; hpc-train --resume to
     step 20 ends at the same parameters.  The same from a sharded run
     (with MPIEXEC_WRAP set): --shard params at 3 ranks wrote the
     checkpoint, --shard optim at 2 ranks resumes it.
  5. init files that do not fit: one line, exit 1.

usage: hpckit_torch.py HPC_TRAIN TMPDIR MODULE_DIR REGRESS.h5 CLASSES.h5 ODE.h5
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import torch

train, tmp, moddir, regress, classes, ode = sys.argv[1:7]
sys.path.insert(0, moddir)
import hpckit_torch as hk  # noqa: E402

torch.set_num_threads(1)
failures = 0


def report(ok, what):
    global failures
    failures += not ok
    print(f"{'ok' if ok else 'FAIL'}: {what}")


def hpc(args, check=True):
    return subprocess.run([train, "-q"] + args, check=check, capture_output=True, text=True)


def rel(a, b):
    return abs(a - b) / abs(b)


# 1. a run, loaded, reproduces its validation loss and MSE in data units
runs = [
    ("/X,/Y regression", regress, ["--layers", "4,16,16,2"], False),
    ("hpc-odegen pairs, target next", ode, ["--layers", "4,16,3"], False),
    ("hpc-odegen pairs, target delta", ode, ["--layers", "4,16,3", "--target", "delta"], False),
    ("cross-entropy", classes, ["--layers", "4,16,3", "--loss", "cross-entropy"], True),
]
for i, (name, data, extra, ce) in enumerate(runs):
    out = f"{tmp}/load{i}"
    hpc(["--data", data, "--out", out, "--steps", "30", "--batch", "16", "--val-fraction", "0.25",
         "--seed", "1", "--optim", "adam", "--lr", "0.01"] + extra)
    model, norm, meta = hk.load(out)
    xv, yv = hk.samples(meta, "val")
    xt, _ = hk.samples(meta, "train")
    sizes = len(xv) == meta["val_samples"] > 0 and len(xt) == meta["train_samples"] > 0
    target = meta["target"] == ("Y" if data != ode else "delta" if "delta" in extra else "next")
    with torch.no_grad():
        out_t = model(norm.inputs(xv))
    lossf = torch.nn.CrossEntropyLoss() if ce else torch.nn.MSELoss()
    loss = lossf(out_t, norm.targets(yv)).item()
    ok = sizes and target and rel(loss, meta["val_loss"]) < 1e-6
    what = f"{name}: val loss {loss:.6g} against the run's {meta['val_loss']:.6g} ({rel(loss, meta['val_loss']):.2g})"
    if ce:
        ok = ok and np.isnan(meta["val_mse_data"])
    else:
        # the run rounds its normalised targets to float32; this is the
        # definition in the data's units, in double
        mse = float(np.mean((norm.outputs(out_t) - yv) ** 2))
        ok = ok and rel(mse, meta["val_mse_data"]) < 1e-5
        what += f", val MSE in data units {mse:.6g} against {meta['val_mse_data']:.6g}"
    report(ok, what + f", {meta['train_samples']}/{meta['val_samples']} samples")


# 2. a PyTorch model as an init file: hpc-train starts from exactly it
def torch_model(seed, sizes):
    torch.manual_seed(seed)
    mods = []
    for j in range(len(sizes) - 1):
        if j:
            mods.append(torch.nn.Tanh())
        mods.append(torch.nn.Linear(sizes[j], sizes[j + 1]))
    return torch.nn.Sequential(*mods)


base = ["--data", regress, "--layers", "4,16,16,2", "--batch", "64", "--val-fraction", "0", "--no-normalize",
        "--log-every", "1", "--force"]
m0 = torch_model(11, [4, 16, 16, 2])
init = f"{tmp}/init.h5"
hk.save_init(m0, init)
hpc(base + ["--init-from", init, "--epochs", "0", "--out", f"{tmp}/init0"])
with h5py.File(f"{tmp}/init0/checkpoint.h5", "r") as f:
    same = all(np.array_equal(f[f"model/{k.replace('.', '/')}"][()], v.numpy()) for k, v in m0.state_dict().items())
    recorded = f.attrs["init_from"].decode() == init if isinstance(f.attrs["init_from"], bytes) else \
        f.attrs["init_from"] == init
report(same and recorded, "save_init -> --init-from --epochs 0: the checkpoint holds the PyTorch weights bit for bit "
       "and names the init file")


# 3. --init-from, then N steps of each side
def torch_steps(model, opt, steps, x, y):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return np.array(losses)


def max_param_diff(path, model):
    with h5py.File(path, "r") as f:
        return max(float(np.max(np.abs(f[f"model/{k.replace('.', '/')}"][()] - v.detach().numpy())))
                   for k, v in model.state_dict().items())


with h5py.File(regress, "r") as f:
    X = torch.tensor(f["X"][()], dtype=torch.float32)
    Y = torch.tensor(f["Y"][()], dtype=torch.float32)
optims = [("Adam", ["--optim", "adam", "--lr", "0.01"], lambda p: torch.optim.Adam(p, lr=0.01)),
          ("SGD with momentum", ["--optim", "sgd", "--lr", "0.05", "--momentum", "0.9"],
           lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))]
STEPS = 12
for name, args, make in optims:
    out = f"{tmp}/steps-{name[:3]}"
    hpc(base + args + ["--init-from", init, "--steps", str(STEPS), "--out", out])
    m = np.genfromtxt(f"{out}/metrics.csv", delimiter=",", names=True)
    model = torch_model(11, [4, 16, 16, 2])
    tl = torch_steps(model, make(model.parameters()), STEPS, X, Y)
    hl = np.atleast_1d(m["train_loss_normalized"])
    dl = float(np.max(np.abs(hl - tl) / np.abs(tl)))
    dp = max_param_diff(f"{out}/checkpoint.h5", model)
    report(len(hl) == STEPS and dl < 1e-5 and dp < 1e-5 and tl[-1] < tl[0],
           f"--init-from, {name}: {STEPS} losses within {dl:.2g} relative of PyTorch's "
           f"({tl[0]:.4g} -> {tl[-1]:.4g}), parameters within {dp:.2g}")

# 4. the optimiser state: PyTorch continues hpc-train's checkpoint
for name, args, make in optims:
    out = f"{tmp}/cont-{name[:3]}"
    hpc(base + args + ["--init-from", init, "--steps", "10", "--out", out])
    model, _, meta = hk.load(out)
    opt = make(model.parameters())
    hk.load_optimizer_state(out, model, opt)
    torch_steps(model, opt, 10, X, Y)
    hpc(base[:-1] + args + ["--init-from", init, "--steps", "20", "--out", out, "--resume"])
    dp = max_param_diff(f"{out}/checkpoint.h5", model)
    report(meta["step"] == 10 and dp < 1e-5,
           f"{name}: PyTorch continued hpc-train's step-10 checkpoint (model and optimiser state) to step 20; "
           f"hpc-train --resume ends within {dp:.2g}")


# 4b. a sharded run's checkpoint (each rank wrote its blocks of every
# array) continues in PyTorch, and another sharding resumes it
wrap = os.environ.get("MPIEXEC_WRAP")
if wrap:
    def hpc_np(n, args):
        return subprocess.run([wrap, "-n", str(n), train, "-q"] + args, check=True, capture_output=True, text=True)

    name, args, make = optims[0]
    out = f"{tmp}/cont-shard"
    hpc_np(3, base + args + ["--init-from", init, "--steps", "10", "--out", out, "--shard", "params"])
    model, _, meta = hk.load(out)
    opt = make(model.parameters())
    hk.load_optimizer_state(out, model, opt)
    torch_steps(model, opt, 10, X, Y)
    hpc_np(2, base[:-1] + args + ["--init-from", init, "--steps", "20", "--out", out, "--resume", "--shard", "optim"])
    dp = max_param_diff(f"{out}/checkpoint.h5", model)
    report(meta["step"] == 10 and dp < 1e-5,
           f"{name}: PyTorch continued the step-10 checkpoint of --shard params at 3 ranks to step 20; "
           f"--shard optim at 2 ranks --resume ends within {dp:.2g}")
else:
    report(False, "MPIEXEC_WRAP is not set: the sharded case cannot run")


# 5. init files that do not fit
def refused(what, path, pattern, layers="4,16,16,2"):
    r = hpc(["--data", regress, "--layers", layers, "--steps", "2", "--batch", "16", "--init-from", path,
             "--out", f"{tmp}/bad", "--force"], check=False)
    lines = [x for x in r.stderr.splitlines() if x]
    report(r.returncode == 1 and len(lines) == 1 and pattern in lines[0] and lines[0].startswith("hpc-train: "),
           f"{what}: exit {r.returncode}: {r.stderr.strip()}")


refused("other layer sizes", init, "model/2/weight is [16, 16] but --layers needs [8, 16]", "4,16,8,2")
hk.save_init(torch_model(3, [4, 16, 2]), f"{tmp}/short.h5")
refused("fewer layers", f"{tmp}/short.h5", "model/2/weight is [2, 16] but --layers needs [16, 16]")
with h5py.File(f"{tmp}/long.h5", "w") as f:
    for k, v in torch_model(3, [4, 16, 16, 2, 2]).state_dict().items():
        f[f"model/{k.replace('.', '/')}"] = v.numpy()
refused("more layers", f"{tmp}/long.h5", "/model has 4 layers but --layers gives 3")
with h5py.File(f"{tmp}/flat.h5", "w") as f:
    for k, v in m0.state_dict().items():
        f[k.replace(".", "/")] = v.numpy()
refused("a state_dict not under model/", f"{tmp}/flat.h5", "/model: missing")
with h5py.File(f"{tmp}/nan.h5", "w") as f:
    for k, v in m0.state_dict().items():
        a = v.numpy().copy()
        if k == "2.bias":
            a[3] = np.nan
        f[f"model/{k.replace('.', '/')}"] = a
refused("NaN in the weights", f"{tmp}/nan.h5", "the weights hold NaN or infinity")
# the activation goes with the weights: a GELU model (save_init records
# it, a checkpoint has it) is refused under another --act, the default
# tanh included, instead of training silently as tanh
gelu = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.GELU(), torch.nn.Linear(16, 16), torch.nn.GELU(),
                           torch.nn.Linear(16, 2))
hk.save_init(gelu, f"{tmp}/gelu.h5")
with h5py.File(f"{tmp}/gelu.h5", "r") as f:
    act = f.attrs.get("activation")
report(act in ("gelu", b"gelu"), f"save_init records the activation: {act!r}")
refused("a GELU model without --act", f"{tmp}/gelu.h5",
        "its model was trained with gelu, but this run's --act is tanh (pass --act gelu)")
r = hpc(base + ["--act", "gelu", "--init-from", f"{tmp}/gelu.h5", "--epochs", "0", "--out", f"{tmp}/gelu0"],
        check=False)
report(r.returncode == 0, f"a GELU model with --act gelu: exit {r.returncode} {r.stderr.strip()}")
refused("a GELU run's checkpoint without --act", f"{tmp}/gelu0/checkpoint.h5",
        "its model was trained with gelu, but this run's --act is tanh")
try:
    hk.save_init(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                                     torch.nn.Tanh(), torch.nn.Linear(16, 2)), f"{tmp}/mixed.h5")
    report(False, "save_init took a model with two activations")
except ValueError as e:
    report("activations" in str(e), f"save_init refuses two kinds of activation: {e}")
try:
    hk.save_init(torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Dropout(), torch.nn.Linear(2, 2),
                                     torch.nn.BatchNorm1d(2)), f"{tmp}/bn.h5")
    report(False, "save_init took a model with BatchNorm")
except ValueError as e:
    report("running_mean" in str(e), f"save_init refuses what hpc-train cannot hold: {e}")
sys.exit(1 if failures else 0)
