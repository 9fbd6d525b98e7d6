"""pmpi_mpi4py.py - an mpi4py script under libhpc-mpi.so (tests/pmpi.sh):
buffer-based collectives (Allreduce, Bcast, Allgather, Reduce, nonblocking
Iallreduce) on numpy arrays, checked against known answers."""
import sys
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
r, p = comm.Get_rank(), comm.Get_size()
bad = 0
for n in (1, 7, 1000, 100000):
    for dt in (np.float64, np.float32, np.int32, np.int64):
        x = (np.arange(n) % 13 + r + 1).astype(dt)
        y = np.empty_like(x)
        comm.Allreduce(x, y, op=MPI.SUM)
        want = sum((np.arange(n) % 13 + q + 1) for q in range(p)).astype(dt)
        bad += not np.array_equal(y, want)
        z = x.copy() if r == 0 else np.zeros_like(x)
        comm.Bcast(z, root=0)
        bad += not np.array_equal(z, (np.arange(n) % 13 + 1).astype(dt))
        g = np.empty(p * n, dtype=dt)
        comm.Allgather(x, g)
        bad += not np.array_equal(g, np.concatenate([(np.arange(n) % 13 + q + 1).astype(dt) for q in range(p)]))
        m = np.empty_like(x)
        comm.Reduce(x, m, op=MPI.MAX, root=p - 1)
        if r == p - 1:
            bad += not np.array_equal(m, (np.arange(n) % 13 + p).astype(dt))
        q = np.empty_like(x)
        req = comm.Iallreduce(x, q, op=MPI.MIN)
        req.Wait()
        bad += not np.array_equal(q, (np.arange(n) % 13 + 1).astype(dt))
bad = comm.allreduce(bad)
if r == 0:
    print("pmpi_mpi4py: %d ranks, %d failures" % (p, bad))
sys.exit(1 if bad else 0)
