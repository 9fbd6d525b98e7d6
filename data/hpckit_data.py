"""hpckit_data - your data in and out of hpckit's file kinds (docs/data.md).

In: CSV (streamed), NumPy .npy/.npz, NetCDF (netCDF4 or xarray files),
PyTorch tensors -> the /X,/Y HDF5 file hpc-train reads (the train-xy or,
with labels, the train-labels kind of data/schemas).  Out: an hpc-odegen
file -> NetCDF with named dimensions (ncdump, xarray).  The command line is
hpc-convert; hpckit_torch.save_dataset writes a TensorDataset through
write_arrays.

Bad data is a DataError whose text is one line naming the file and, where
they exist, the row and column; nothing is left under the output's name
(everything is written to OUT.partial and renamed when complete).

Layout for hpc-train's read pattern: /X and /Y are contiguous (no chunks,
no compression).  hpc-train reads rows at random (shuffled mini-batches)
or whole blocks; a contiguous dataset serves a row with one read of its
bytes, where a chunked, compressed one would decompress a whole chunk per
row.  The sizes are known before writing: a CSV file's rows are counted in
a first pass over its bytes (fast, no parsing), then parsed once, block by
block, so memory stays at one block (BLOCK_ROWS rows) whatever the size.
"""
import csv
import datetime
import itertools
import os
import re

import h5py
import numpy as np

BLOCK_ROWS = 65536
PROGRAM = "hpc-convert"


class DataError(Exception):
    """Bad data: the one line to print (it names the file)."""


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- writing /X,/Y ----

class _Writer:
    """OUT.partial with contiguous /X [N, F] and /Y ([N, O] float or [N]
    int labels); rows appended in blocks; renamed to OUT by finish()."""

    def __init__(self, out, n, nx, ny, labels, xdtype, attrs):
        self.out, self.tmp = out, out + ".partial"
        self.labels = labels
        _room(out, n * (nx * np.dtype(xdtype).itemsize + (4 if labels else ny * np.dtype(xdtype).itemsize)))
        self.f = h5py.File(self.tmp, "w")
        self.x = self.f.create_dataset("X", (n, nx), dtype=xdtype)
        self.y = (self.f.create_dataset("Y", (n,), dtype="int32") if labels
                  else self.f.create_dataset("Y", (n, ny), dtype=xdtype))
        self.at = 0
        self.maxlabel = -1
        for k, v in attrs.items():
            if v is not None:
                self.f.attrs[k] = v
        self.f.attrs["program"] = PROGRAM
        self.f.attrs["created"] = _now()

    def rows(self, x, y):
        n = len(x)
        self.x[self.at:self.at + n] = x
        self.y[self.at:self.at + n] = y
        if self.labels and n:
            self.maxlabel = max(self.maxlabel, int(np.max(y)))
        self.at += n

    def finish(self, classes):
        if self.labels:
            self.f.attrs["classes"] = classes if classes else self.maxlabel + 1
        self.f.close()
        os.replace(self.tmp, self.out)

    def abandon(self):
        try:
            self.f.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)


def _room(out, need):
    """A DataError unless out's folder has room for need bytes (and 64 KiB
    of metadata): checked before anything is written, so an input larger
    than the disk left fails at once, with no half-written file."""
    folder = os.path.dirname(os.path.abspath(out))
    try:
        st = os.statvfs(folder)
    except OSError as e:
        raise DataError(f"{out}: its folder cannot be used: {e.strerror}") from None
    free = st.f_bavail * st.f_frsize
    need += 64 << 10   # HDF5's metadata and attributes, generously
    if need > free:
        raise DataError(f"{out}: no room: it needs {_size(need)}, {folder} has {_size(free)} free")


def _size(b):
    return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 2**10:.0f} KiB"


def _labels(name, y, first_row, classes, where):
    """y (float or int, [n] or [n, 1]) as int32 class labels; a DataError
    naming the first bad one (where(i): its place in the file)"""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataError(f"{name}: labels of shape {list(y.shape)}: one label per sample expected")
    bad = ~np.isfinite(y) | (y != np.round(y)) if y.dtype.kind == "f" else np.zeros(len(y), bool)
    bad |= y < 0
    if classes:
        bad |= y >= classes
    if bad.any():
        i = int(np.argmax(bad))
        rule = f"0 .. {classes - 1} (--classes {classes})" if classes else "a whole number >= 0"
        raise DataError(f"{name}: {where(first_row + i)}: label {y[i]!r} is not a class label: expected {rule}")
    return y.astype(np.int32)


def _check_finite(name, x, first_row, where, what):
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"{name}: {where(first_row + int(i), int(j))}: {x[i, j]} in {what}: no NaN or infinity allowed")


def write_arrays(out, x, y, labels=False, classes=0, attrs=None, name=None):
    """Array-likes x [N, ...] (flattened to [N, F]) and y ([N, O] or [N]) ->
    OUT (/X,/Y), block by block (memory-mapped .npy files are never read
    whole).  name: the input, for messages."""
    name = name or out
    n = len(x)
    if len(y) != n:
        raise DataError(f"{name}: {n} inputs but {len(y)} targets: one target row per sample expected")
    if n == 0:
        raise DataError(f"{name}: no samples")
    nx = int(np.prod(x.shape[1:])) if len(x.shape) > 1 else 1
    ny = int(np.prod(y.shape[1:])) if len(y.shape) > 1 else 1
    for what, a in (("inputs", x), ("targets", y)):
        if a.dtype.kind not in "fiub":
            raise DataError(f"{name}: {what} of dtype {a.dtype}: numbers expected (float or integer)")
    xdtype = "float32" if x.dtype == np.float32 and (labels or y.dtype == np.float32) else "float64"
    w = _Writer(out, n, nx, ny, labels, xdtype, attrs or {})
    try:
        for r in range(0, n, BLOCK_ROWS):
            xb = np.asarray(x[r:r + BLOCK_ROWS], dtype=np.float64).reshape(-1, nx)
            yb = np.asarray(y[r:r + BLOCK_ROWS])
            _check_finite(name, xb, r, lambda i, j: f"sample {i}, input {j}", "the inputs")
            if labels:
                yb = _labels(name, yb, r, classes, lambda i: f"sample {i}")
            else:
                yb = yb.astype(np.float64).reshape(-1, ny)
                _check_finite(name, yb, r, lambda i, j: f"sample {i}, target {j}", "the targets")
            w.rows(xb, yb)
        w.finish(classes)
    except BaseException:
        w.abandon()
        raise


# ---- CSV ----

def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def _csv_lines(f):
    """the file's non-blank lines with their line numbers (1-based)"""
    for no, line in enumerate(f, 1):
        if line.strip():
            yield no, line


def _csv_fail(path, block, ncols, names):
    """the first bad line of a block numpy refused, as one DataError"""
    for no, line in block:
        fields = next(csv.reader([line]))
        if len(fields) != ncols:
            raise DataError(f"{path}: line {no}: {len(fields)} fields, expected {ncols} (as the first line)")
        for j, v in enumerate(fields):
            try:
                x = float(v)
            except ValueError:
                col = f"column {j + 1}" + (f" ({names[j]})" if names else "")
                raise DataError(f"{path}: line {no}, {col}: '{v.strip()}' is not a number") from None
            if not np.isfinite(x):
                col = f"column {j + 1}" + (f" ({names[j]})" if names else "")
                raise DataError(f"{path}: line {no}, {col}: '{v.strip()}': no NaN or infinity allowed")
    raise DataError(f"{path}: lines {block[0][0]}-{block[-1][0]}: cannot be read as numbers")


def _columns(path, spec, ncols, names):
    """--y: names or 1-based numbers (negative: from the end) -> indices"""
    out = []
    for s in spec.split(","):
        if names and s in names:
            out.append(names.index(s))
            continue
        try:
            k = int(s)
        except ValueError:
            raise DataError(f"{path}: --y {spec}: no column '{s}'" + (f" (the columns: {','.join(names)})" if names else "")) from None
        if not (1 <= abs(k) <= ncols):
            raise DataError(f"{path}: --y {spec}: column {k}, but the file has {ncols}")
        out.append(k - 1 if k > 0 else ncols + k)
    return out


def csv_to_h5(path, out, y="-1", labels=False, classes=0, delimiter=","):
    """A CSV file of numbers (a header line of names optional) -> OUT:
    the --y columns are /Y, the others /X.  Streamed: one block of rows in
    memory at a time."""
    with open(path, "rb") as f:
        nonblank = sum(1 for line in f if line.strip())
    with open(path, newline="") as f:
        lines = _csv_lines(f)
        first = next(lines, None)
        if first is None:
            raise DataError(f"{path}: empty: no header and no data")
        head = next(csv.reader([first[1]], delimiter=delimiter))
        ncols = len(head)
        names = None if all(_is_number(v) for v in head) else [v.strip() for v in head]
        n = nonblank - (names is not None)
        if n == 0:
            raise DataError(f"{path}: a header line and no data rows")
        ycols = _columns(path, y, ncols, names)
        xcols = [j for j in range(ncols) if j not in ycols]
        if not xcols:
            raise DataError(f"{path}: --y {y} takes every column: no inputs left")
        attrs = {"source": os.path.abspath(path)}
        if names:
            attrs["x_names"] = ",".join(names[j] for j in xcols)
            attrs["y_names"] = ",".join(names[j] for j in ycols)
        w = _Writer(out, n, len(xcols), len(ycols), labels, "float64", attrs)
        try:
            if names is None:
                lines = itertools.chain([first], lines)
            row = 0
            while True:
                block = list(itertools.islice(lines, BLOCK_ROWS))
                if not block:
                    break
                try:
                    a = np.loadtxt([line for _, line in block], delimiter=delimiter, ndmin=2, dtype=np.float64,
                                   comments=None)
                except ValueError:
                    _csv_fail(path, block, ncols, names)
                if a.shape[1] != ncols or not np.isfinite(a).all():
                    _csv_fail(path, block, ncols, names)
                line_of = lambda i, block=block, r0=row: f"line {block[i - r0][0]}"
                yb = (_labels(path, a[:, ycols], row, classes, line_of) if labels else a[:, ycols])
                w.rows(a[:, xcols], yb)
                row += len(block)
            w.finish(classes)
        except BaseException:
            w.abandon()
            raise


# ---- NumPy, NetCDF, PyTorch ----

def _npy(path):
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as e:
        if "allow_pickle" in str(e) or "Python objects" in str(e):
            raise DataError(f"{path}: an array of Python objects (dtype object): numbers expected; "
                            "save it with a numeric dtype (a.astype(np.float64))") from None
        raise DataError(f"{path}: not a NumPy array file: {e}") from None


def _pick(path, have, name, what):
    if name not in have:
        raise DataError(f"{path}: no {what} '{name}' (it has: {', '.join(sorted(have)) or 'none'}; "
                        f"name another with --x/--y)")
    return have[name]


def npz_to_h5(path, out, xname="X", yname="Y", **kw):
    try:
        z = np.load(path, allow_pickle=False)
    except ValueError as e:
        raise DataError(f"{path}: not a NumPy .npz file: {e}") from None
    with z:
        keys = {k: k for k in z.files}
        try:
            x, y = z[_pick(path, keys, xname, "array")], z[_pick(path, keys, yname, "array")]
        except ValueError:
            raise DataError(f"{path}: an array of Python objects (dtype object): numbers expected") from None
        write_arrays(out, x, y, name=path, attrs={"source": os.path.abspath(path)}, **kw)


def npy_to_h5(xpath, ypath, out, **kw):
    write_arrays(out, _npy(xpath), _npy(ypath), name=f"{xpath}, {ypath}",
                 attrs={"source": f"{os.path.abspath(xpath)},{os.path.abspath(ypath)}"}, **kw)


def netcdf_to_h5(path, out, xname="X", yname="Y", **kw):
    try:
        import netCDF4
    except ImportError:
        raise DataError(f"{path}: reading NetCDF needs the Python module netCDF4 (python3-netcdf4)") from None
    try:
        ds = netCDF4.Dataset(path, "r")
    except OSError as e:
        raise DataError(f"{path}: not a NetCDF file: {e}") from None
    with ds:
        ds.set_auto_mask(False)
        v = ds.variables
        x, y = _pick(path, v, xname, "variable"), _pick(path, v, yname, "variable")
        write_arrays(out, x, y, name=path, attrs={"source": os.path.abspath(path)}, **kw)


def torch_to_h5(path, out, **kw):
    import torch
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:   # a pickled class (TensorDataset) or not a torch file
        why = re.search(r"Unsupported (global|class):? ?[\w.]+", str(e))
        raise DataError(f"{path}: not a file of tensors only ({why.group(0) if why else type(e).__name__}); "
                        "save (X, Y) with "
                        "torch.save((X, Y), FILE) or write a TensorDataset with hpckit_torch.save_dataset") from None
    if isinstance(obj, dict):
        obj = (_pick(path, obj, kw.pop("xname", "X"), "tensor"), _pick(path, obj, kw.pop("yname", "Y"), "tensor"))
    else:
        kw.pop("xname", None)
        kw.pop("yname", None)
    if not (isinstance(obj, (tuple, list)) and len(obj) == 2):
        raise DataError(f"{path}: holds {type(obj).__name__}: expected (X, Y) or {{'X': ..., 'Y': ...}}")
    write_arrays(out, obj[0].numpy(), obj[1].numpy(), name=path, attrs={"source": os.path.abspath(path)}, **kw)


# ---- out: odegen -> NetCDF ----

ODEGEN_VARS = [("t", ("t",)), ("traj", ("traj",)), ("component", ("component",)), ("x0", ("traj", "component")),
               ("y", ("traj", "t", "component")), ("stats/status", ("traj",)), ("stats/nsteps", ("traj",)),
               ("stats/nfev", ("traj",)), ("stats/nrejected", ("traj",))]


def _attr(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray) and v.dtype.kind in "SO":
        return ",".join(s.decode() if isinstance(s, bytes) else str(s) for s in v)
    return v


def odegen_to_netcdf(path, out):
    """An hpc-odegen file (plain or joined) -> NetCDF-4 with the dimensions
    traj, t, component: y(traj, t, component), x0(traj, component),
    status(traj), ... and the file's attributes.  /y copied in blocks of
    trajectories."""
    import netCDF4
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise DataError(f"{path}: not an HDF5 file: {e}") from None
    tmp = out + ".partial"
    try:
        with f:
            for p, _ in ODEGEN_VARS:
                if p not in f:
                    raise DataError(f"{path}: /{p} missing: not an hpc-odegen file (hpc-h5check {path} says more)")
            n, nt, d = f["y"].shape
            with netCDF4.Dataset(tmp, "w", format="NETCDF4") as nc:
                for dim, size in (("traj", n), ("t", nt), ("component", d)):
                    nc.createDimension(dim, size)
                for p, dims in ODEGEN_VARS:
                    src = f[p]
                    name = p.split("/")[-1]
                    fill = np.nan if src.dtype.kind == "f" else None
                    v = nc.createVariable(name, src.dtype.newbyteorder("="), dims, fill_value=fill,
                                          chunksizes=(1, nt, d) if name == "y" else None)
                    for k, a in src.attrs.items():
                        if k not in ("CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "_Netcdf4Dimid"):
                            v.setncattr(k, _attr(a))
                    if len(dims) == 1:
                        v[:] = src[()]
                    else:
                        step = max(1, (64 << 20) // max(1, src[0].nbytes))
                        for r in range(0, n, step):
                            v[r:r + step] = src[r:r + step]
                for k, a in f.attrs.items():
                    nc.setncattr(k, _attr(a))
                nc.setncattr("converted_by", PROGRAM)
                nc.setncattr("converted_from", os.path.abspath(path))
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
