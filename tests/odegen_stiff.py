#!/usr/bin/env python3
"""odegen_stiff.py - hpc-odegen's implicit methods (--method BDF, SUNDIALS
CVODE; --method ESDIRK, SUNDIALS ARKODE) against scipy's BDF and Radau on
stiff systems.

    odegen_stiff.py FILE.h5 [--n K] [--bound B]

For the first K trajectories of FILE.h5 (the system, its parameters, the
tolerances and the output times from its attributes; the initial states
from /x0), solves with scipy's BDF and Radau at the file's rtol and atol,
and with Radau at rtol 1e-12 as the reference.  The error of each is
max over outputs and components of |y - y_ref| / (atol + rtol |y_ref|):
how many tolerances off.  Passes when hpc-odegen's is at most B (default
10) or at most 10x scipy BDF's own, whichever is larger, and every status
is 0.  scipy gets the Jacobian (or its sparsity pattern) as hpc-odegen's
system file has it.  Prints the errors and the steps and evaluations side by side.
"""
import argparse
import sys
import time

import h5py
import numpy as np
import scipy.sparse
from scipy.integrate import solve_ivp


def robertson(a):
    k1, k2, k3 = a["param_k1"], a["param_k2"], a["param_k3"]

    def f(t, x):
        r1, r2, r3 = k1 * x[0], k2 * x[1] * x[2], k3 * x[1] * x[1]
        return [-r1 + r2, r1 - r2 - r3, r3]

    def jac(t, x):
        return [[-k1, k2 * x[2], k2 * x[1]],
                [k1, -k2 * x[2] - 2 * k3 * x[1], -k2 * x[1]],
                [0, 2 * k3 * x[1], 0]]
    return f, {"jac": jac}


def vanderpol(a):
    mu = a["param_mu"]

    def f(t, x):
        return [x[1], mu * (1 - x[0] * x[0]) * x[1] - x[0]]

    def jac(t, x):
        return [[0, 1], [-2 * mu * x[0] * x[1] - 1, mu * (1 - x[0] * x[0])]]
    return f, {"jac": jac}


def brusselator(a):
    A, B, alpha, dim = a["param_A"], a["param_B"], a["param_alpha"], int(a["dim"])
    n = dim // 2
    c = alpha * (n + 1) ** 2

    def f(t, x):
        u, v = x[0::2], x[1::2]
        up = np.concatenate(([1.0], u, [1.0]))
        vp = np.concatenate(([3.0], v, [3.0]))
        uuv = u * u * v
        out = np.empty_like(x)
        out[0::2] = A + uuv - (B + 1) * u + c * (up[:-2] - 2 * u + up[2:])
        out[1::2] = B * u - uuv + c * (vp[:-2] - 2 * v + vp[2:])
        return out
    # scipy differences the banded Jacobian in 5 calls, not 2 n, given its
    # pattern (u_i, v_i interleaved: a band of 2 either side)
    return f, {"jac_sparsity": scipy.sparse.diags([1] * 5, [-2, -1, 0, 1, 2], shape=(dim, dim))}


SYSTEMS = {"test-robertson": robertson, "vanderpol": vanderpol, "test-brusselator": brusselator}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--bound", type=float, default=10.0)
    o = ap.parse_args()
    h = h5py.File(o.file, "r")
    a = h.attrs
    name = a["system"]
    name = name.decode() if isinstance(name, bytes) else name
    f, kw = SYSTEMS[name](a)
    rtol, atol = float(a["rtol"]), float(a["atol"])
    t = h["t"][...]
    t0, t1 = float(a["t0"]), float(a["t1"])
    worst = {"hpc-odegen": 0.0, "BDF": 0.0, "Radau": 0.0}
    counts = {"hpc-odegen": [0, 0], "BDF": [0, 0], "Radau": [0, 0]}
    secs = {"BDF": 0.0, "Radau": 0.0}
    ok = True
    for i in range(min(o.n, h["x0"].shape[0])):
        x0 = h["x0"][i]
        if h["stats/status"][i] != 0:
            print("odegen_stiff: trajectory %d: status %d" % (i, h["stats/status"][i]))
            ok = False
            continue
        ref = solve_ivp(f, (t0, t1), x0, method="Radau", rtol=1e-12, atol=atol * 1e-4, t_eval=t, **kw)
        assert ref.status == 0, ref.message
        scale = atol + rtol * np.abs(ref.y.T)
        err = np.abs(h["y"][i] - ref.y.T) / scale
        worst["hpc-odegen"] = max(worst["hpc-odegen"], err.max())
        counts["hpc-odegen"][0] += int(h["stats/nsteps"][i])
        counts["hpc-odegen"][1] += int(h["stats/nfev"][i])
        for m in ("BDF", "Radau"):
            s0 = time.perf_counter()
            s = solve_ivp(f, (t0, t1), x0, method=m, rtol=rtol, atol=atol, t_eval=t, **kw)
            secs[m] += time.perf_counter() - s0
            assert s.status == 0, s.message
            worst[m] = max(worst[m], (np.abs(s.y.T - ref.y.T) / scale).max())
            counts[m][1] += s.nfev
    print("odegen_stiff: %s, %d trajectories, rtol %g atol %g; error in tolerances (|y - y_ref| / "
          "(atol + rtol |y_ref|), y_ref: Radau at rtol 1e-12), right-hand side evaluations:"
          % (name, min(o.n, h["x0"].shape[0]), rtol, atol))
    meth = a["method"]
    print("  hpc-odegen steps %d (--method %s)" % (counts["hpc-odegen"][0], meth.decode() if isinstance(meth, bytes) else meth))
    for m in worst:
        print("  %-10s error %8.3g  nfev %8d%s" % (m, worst[m], counts[m][1],
              "  (%.3f s)" % secs[m] if m in secs else ""))
    bound = max(o.bound, 10 * worst["BDF"])
    if not worst["hpc-odegen"] <= bound:
        print("odegen_stiff: FAIL: hpc-odegen's error %.3g beyond %.3g" % (worst["hpc-odegen"], bound))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
