"""torch_bench.py - PyTorch's samples/s on hpc-train's benchmark problem,
the baseline that apps/train/bench.sh and bench_shard.sh print beside
hpc-train's figures (the same model, data, batch and optimiser).

  torch_bench.py ODE.h5 STEPS NPROC [--layers 11,256,256,10] [--batch 256]
                 [--window 100] [--mode ddp|zero1|fsdp] [--scratch DIR]

The flow-map pairs of an hpc-odegen file (the first 90% of the
trajectories: hpc-train's training split), normalised per column, a
tanh MLP, MSE, Adam (lr 1e-3), one thread a process, global batch
BATCH split over NPROC processes (torch.multiprocessing, gloo).  With
NPROC > 1, --mode says how the model is replicated:
  ddp    DistributedDataParallel: everything on every rank
  zero1  DDP with torch.distributed.optim.ZeroRedundancyOptimizer: the
         Adam state sharded over the ranks (ZeRO-1, hpc-train --shard optim)
  fsdp   FullyShardedDataParallel (ZeRO-3, hpc-train --shard params)
Prints one line: "RATE STATE", the median samples/s over windows of
WINDOW steps (the first left out) and the model state rank 0 holds in
bytes (parameters, gradients and optimiser state); or, where this
PyTorch cannot run the mode, "unavailable: REASON" and exit 3.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from hpckit_torch import usable_trajectories   # beside this file


def args():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("data")
    a.add_argument("steps", type=int)
    a.add_argument("nproc", type=int)
    a.add_argument("--layers", default="11,256,256,10")
    a.add_argument("--batch", type=int, default=256)
    a.add_argument("--window", type=int, default=100)
    a.add_argument("--mode", choices=["ddp", "zero1", "fsdp"], default="ddp")
    a.add_argument("--scratch", default=tempfile.gettempdir())
    return a.parse_args()


def data(path):
    with h5py.File(path, "r") as f:
        good = usable_trajectories(f, path)   # a row without a result is refused, not skipped
        y, t = f["y"][()], f["t"][()]
    y = y[good]
    n, nt, d = y.shape
    x = np.concatenate([y[:, :-1], np.broadcast_to(t[:-1, None], (n, nt - 1, 1))], axis=2).reshape(-1, d + 1)
    tg = y[:, 1:].reshape(-1, d)
    ntrain = len(x) - round(0.1 * n) * (nt - 1)
    x, tg = x[:ntrain], tg[:ntrain]
    norm = lambda a: (a - a.mean(axis=0)) / a.std(axis=0)
    return torch.tensor(norm(x), dtype=torch.float32), torch.tensor(norm(tg), dtype=torch.float32)


def mlp(sizes):
    mods = []
    for i in range(len(sizes) - 1):
        mods.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            mods.append(torch.nn.Tanh())
    return torch.nn.Sequential(*mods)


def fsdp_class():
    """FSDP, or the reason this PyTorch cannot give it"""
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel
        return FullyShardedDataParallel, None
    except Exception as e:   # Debian 12's torch 1.13 on Python 3.11: a dataclass error at import
        return None, f"{type(e).__name__} importing torch.distributed.fsdp: {str(e)[:160]}"


def wrap(model, mode, world):
    """The model and its optimiser for the mode"""
    if world == 1:
        return model, torch.optim.Adam(model.parameters(), lr=1e-3)
    if mode == "fsdp":
        fsdp, _ = fsdp_class()
        model = fsdp(model)
        return model, torch.optim.Adam(model.parameters(), lr=1e-3)
    model = torch.nn.parallel.DistributedDataParallel(model)
    if mode == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return model, ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def state_bytes(model, opt):
    """Parameters, gradients and the optimiser state this rank holds"""
    n = sum(p.numel() * p.element_size() for p in model.parameters())
    n += sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    inner = getattr(opt, "optim", opt)   # ZeroRedundancyOptimizer: the local shard's optimiser
    for s in inner.state.values():
        n += sum(v.numel() * v.element_size() for v in s.values() if torch.is_tensor(v) and v.dim() > 0)
    return n


def run(rank, o, rates):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x, y = data(o.data)
    if o.nproc > 1:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(o.scratch, "torch_bench.init"),
                                rank=rank, world_size=o.nproc)
    model, opt = wrap(mlp([int(v) for v in o.layers.split(",")]), o.mode, o.nproc)
    lossf = torch.nn.MSELoss()
    per = o.batch // o.nproc
    g = torch.Generator().manual_seed(0)
    perm, pos, t0, windows = torch.randperm(len(x), generator=g), 0, time.perf_counter(), []
    for s in range(1, o.steps + 1):
        if pos + o.batch > len(x):
            perm, pos = torch.randperm(len(x), generator=g), 0
        idx = perm[pos + rank * per: pos + (rank + 1) * per]
        pos += o.batch
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        if s % o.window == 0:
            now = time.perf_counter()
            windows.append(o.window * o.batch / (now - t0))
            t0 = now
    if rank == 0:
        rates.put((statistics.median(windows[1:] or windows), state_bytes(model, opt)))
    if o.nproc > 1:
        dist.destroy_process_group()


def main():
    o = args()
    if o.nproc > 1 and o.mode == "fsdp":
        fsdp, why = fsdp_class()
        if fsdp is None:
            print("unavailable:", why)
            sys.exit(3)
    init = os.path.join(o.scratch, "torch_bench.init")
    if os.path.exists(init):
        os.unlink(init)
    q = mp.get_context("spawn").SimpleQueue()
    if o.nproc == 1:
        run(0, o, q)
    else:
        mp.spawn(run, args=(o, q), nprocs=o.nproc)
    rate, state = q.get()
    print(f"{rate:.1f} {state}")


if __name__ == "__main__":
    main()
