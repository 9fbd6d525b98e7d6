#!/bin/sh
# data_convert.sh - hpc-convert (data/): CSV -> HDF5 -> NumPy equals the
# CSV's numbers bit for bit (header names kept, --y by name, labels);
# .npz, X.npy Y.npy, NetCDF (written by xarray) and PyTorch tensors the
# same; every output a good train-xy/train-labels file (hpc-h5check) that
# hpc-train trains on; hpc-odegen output -> NetCDF that ncdump and xarray
# read with named dimensions and the same values.  Bad data: a ragged
# row, a non-numeric cell, a header-only file, mixed types, labels out of
# range, an object-dtype .npy, NetCDF without the variable: one line
# naming file, line and column, exit 1, no output file (nor .partial);
# an input larger than the disk left (a small tmpfs, where it can mount
# one) the same, before anything is written.
. "$top_srcdir/tests/train_lib.sh"
need_numpy
H5CHECK=$top_builddir/apps/h5check/hpc-h5check
convert() { "$PYTHON" "$top_srcdir/data/hpc-convert" "$@"; }
good() {
    "$H5CHECK" "$1" > "$T/out" 2>&1 || { cat "$T/out" >&2; fail "$1 is not a good file"; }
    grep -q ": ok, $2\$" "$T/out" || { cat "$T/out" >&2; fail "$1 is not a $2 file"; }
}
# bad PATTERN ARGS...: exit 1, one line "hpc-convert: ..." matching, nothing written
bad() {
    pat=$1
    shift
    rc=0
    convert "$@" --out "$T/bad.h5" > /dev/null 2> "$T/stderr" || rc=$?
    one_line_error "$rc" 1 "$pat" hpc-convert
    grep -q -- "$pat" "$T/stderr" || { cat "$T/stderr" >&2; fail "expected '$pat'"; }
    [ ! -e "$T/bad.h5" ] && [ ! -e "$T/bad.h5.partial" ] || fail "$pat: an output was left"
    echo "ok: $(sed "s|$T/||g" "$T/stderr")"
}

# ---- round trips ----
"$PYTHON" - "$T" <<'PY' || fail "making the inputs"
import sys
import numpy as np
T = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((1000, 4)) * 10.0 ** rng.integers(-5, 5, (1000, 4))
y = rng.standard_normal((1000, 1))
lab = rng.integers(0, 3, 1000)
with open(f"{T}/d.csv", "w") as f:
    f.write("a,b,c,d,target\n")
    for r, t in zip(x, y[:, 0]):
        f.write(",".join(repr(float(v)) for v in r) + f",{t!r}\n")
with open(f"{T}/lab.csv", "w") as f:
    f.write("label,a,b,c,d\n")
    for r, k in zip(x, lab):
        f.write(f"{k}," + ",".join(repr(float(v)) for v in r) + "\n")
np.savez(f"{T}/d.npz", X=x.astype(np.float32), Y=y.astype(np.float32))
np.save(f"{T}/x.npy", x)
np.save(f"{T}/lab.npy", lab)
np.savez(f"{T}/ref.npz", x=x, y=y, lab=lab)
np.save(f"{T}/obj.npy", np.array([[1.0, "a"]], dtype=object))
try:
    import xarray as xr
    xr.Dataset({"X": (("sample", "feature"), x), "Y": (("sample",), lab)}).to_netcdf(f"{T}/d.nc")
    xr.Dataset({"X": (("sample", "feature"), x)}).to_netcdf(f"{T}/noy.nc")
except ImportError:
    pass
try:
    import torch
    torch.save((torch.from_numpy(x), torch.from_numpy(y)), f"{T}/d.pt")
except ImportError:
    pass
PY
convert "$T/d.csv" --out "$T/csv.h5" || fail "CSV"
convert "$T/lab.csv" --y label --labels --classes 3 --out "$T/lab.h5" || fail "CSV labels"
convert "$T/d.npz" --out "$T/npz.h5" || fail "npz"
convert "$T/x.npy" "$T/lab.npy" --labels --out "$T/npy.h5" || fail "npy"
good "$T/csv.h5" train-xy
good "$T/lab.h5" train-labels
good "$T/npz.h5" train-xy
good "$T/npy.h5" train-labels
more=
if [ -e "$T/d.nc" ]; then
    convert "$T/d.nc" --labels --out "$T/nc.h5" || fail "NetCDF"
    good "$T/nc.h5" train-labels
    more="$more nc"
fi
if [ -e "$T/d.pt" ]; then
    convert "$T/d.pt" --out "$T/pt.h5" || fail "PyTorch"
    good "$T/pt.h5" train-xy
    more="$more pt"
fi
"$PYTHON" - "$T" $more <<'PY' || fail "a round trip differs"
import sys
import h5py
import numpy as np
T = sys.argv[1]
r = np.load(f"{T}/ref.npz")
x, y, lab = r["x"], r["y"], r["lab"]

def same(name, file, X, Y, **attrs):
    with h5py.File(f"{T}/{file}", "r") as f:
        ok = np.array_equal(f["X"][()], X) and np.array_equal(f["Y"][()], Y) and f["Y"].dtype == Y.dtype
        ok = ok and f["X"].id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
        for k, v in attrs.items():
            ok = ok and f.attrs[k] == v
    print(f"{'ok' if ok else 'FAIL'}: {name}: /X,/Y equal the input bit for bit, contiguous")
    return ok

ok = same("CSV -> HDF5 -> NumPy", "csv.h5", x, y, x_names="a,b,c,d", y_names="target")
ok &= same("CSV labels (--y label)", "lab.h5", x, lab.astype(np.int32), classes=3, y_names="label")
ok &= same(".npz float32", "npz.h5", x.astype(np.float32), y.astype(np.float32))
ok &= same("X.npy Y.npy labels", "npy.h5", x, lab.astype(np.int32))
if "nc" in sys.argv:
    ok &= same("NetCDF (xarray) labels", "nc.h5", x, lab.astype(np.int32))
if "pt" in sys.argv:
    ok &= same("PyTorch tensors", "pt.h5", x, y)
sys.exit(0 if ok else 1)
PY
# hpc-train learns from a converted file
train 1 -q --data "$T/lab.h5" --loss cross-entropy --layers 4,8,3 --steps 3 --batch 16 --out "$T/run" ||
    fail "hpc-train on the converted labels"
echo "ok: hpc-train trains on the converted file"

# ---- out: hpc-odegen -> NetCDF ----
"$ODEGEN" -q -s lorenz -n 6 --nt 5 --t1 0.5 --out "$T/ode.h5" || fail "odegen"
if "$PYTHON" -c 'import netCDF4' 2> /dev/null; then
    convert "$T/ode.h5" --out "$T/ode.nc" || fail "odegen -> NetCDF"
    if command -v ncdump > /dev/null; then
        ncdump -h "$T/ode.nc" | grep -q "double y(traj, t, component)" || fail "ncdump: no y(traj, t, component)"
        echo "ok: ncdump: y(traj, t, component)"
    fi
    "$PYTHON" - "$T" <<'PY' || fail "the NetCDF file differs from the odegen file"
import sys
import h5py
import numpy as np
T = sys.argv[1]
try:
    import xarray as xr
    d = xr.open_dataset(f"{T}/ode.nc")
    get = lambda k: d[k].values
    dims = d["y"].dims
except ImportError:
    import netCDF4
    d = netCDF4.Dataset(f"{T}/ode.nc")
    get = lambda k: d[k][:]
    dims = d["y"].dimensions
with h5py.File(f"{T}/ode.h5", "r") as f:
    ok = dims == ("traj", "t", "component")
    for k, p in (("y", "y"), ("x0", "x0"), ("t", "t"), ("status", "stats/status"), ("nfev", "stats/nfev")):
        ok = ok and np.array_equal(get(k), f[p][()])
print(f"{'ok' if ok else 'FAIL'}: odegen -> NetCDF: y{dims}, the same values")
sys.exit(0 if ok else 1)
PY
fi

# ---- bad data ----
printf 'a,b,y\n1,2,3\n4,5\n' > "$T/ragged.csv"
printf 'a,b,y\n1,2,3\n4,abc,6\n' > "$T/text.csv"
printf 'a,b,y\n' > "$T/header.csv"
printf '1,2,3\n4,5,6\n7,yes,1\n' > "$T/mixed.csv"
printf 'a,b,y\n1,2,0\n4,5,3\n' > "$T/labels.csv"
printf 'a,b,y\n1,2,0\n4,5,0.5\n' > "$T/frac.csv"
bad "ragged.csv: line 3: 2 fields, expected 3" "$T/ragged.csv"
bad "text.csv: line 3, column 2 (b): 'abc' is not a number" "$T/text.csv"
bad "header.csv: a header line and no data rows" "$T/header.csv"
bad "mixed.csv: line 3, column 2: 'yes' is not a number" "$T/mixed.csv"
bad "labels.csv: line 3: label 3.0 is not a class label: expected 0 .. 2 (--classes 3)" "$T/labels.csv" --labels --classes 3
bad "frac.csv: line 3: label 0.5 is not a class label" "$T/frac.csv" --labels
bad "obj.npy: an array of Python objects (dtype object)" "$T/obj.npy" "$T/lab.npy"
[ -e "$T/noy.nc" ] && bad "noy.nc: no variable 'Y' (it has: X" "$T/noy.nc"
# an input larger than the disk left (a 32 KiB tmpfs for 40 KB of data, where root may mount one)
mkdir -p "$T/small"
if mount -t tmpfs -o size=32k tmpfs "$T/small" 2> /dev/null; then
    trap 'umount -l "$T/small" 2> /dev/null; rm -rf "$T"' EXIT
    rc=0
    convert "$T/d.csv" --out "$T/small/d.h5" > /dev/null 2> "$T/stderr" || rc=$?
    one_line_error "$rc" 1 "a full disk" hpc-convert
    grep -q "small/d.h5: no room: it needs 103 KiB, .*small has 32 KiB free" "$T/stderr" || fail "a full disk: $(cat "$T/stderr")"
    [ -z "$(ls -A "$T/small")" ] || fail "a full disk: $(ls "$T/small") left"
    echo "ok: $(sed "s|$T/||g" "$T/stderr")"
fi
rc=0
convert "$T/d.csv" --out "$T/csv.h5" 2> "$T/stderr" || rc=$?
one_line_error "$rc" 2 "an existing output" hpc-convert
echo "data_convert: the converters round-trip; bad data is one line, exit 1, no file"
