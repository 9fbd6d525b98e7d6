#!/bin/sh
# odegen_xarray.sh - hpc-odegen's files as xarray users open them: a plain
# run's file (2 ranks) and a joined job array of 3 shards, through every
# netCDF backend installed (netCDF4 and h5netcdf; xarray's default first):
# dimensions traj, t and component with coordinates (no phony_dim_*),
# .sel(t=...) picks the grid time's values as h5py reads them, long_name
# on every variable, the stats group over traj (and the run's bookkeeping
# over chunk, marked internal); the joined file equals the plain one.
# CF conventions (issue 28.9): Conventions, units "1" on the dimensionless
# time, states and counts, /stats/status's flag_values (int8, as the
# variable) and flag_meanings, a coordinate for every dimension (the stats
# group's traj is the root's); xarray's decode_cf takes the file as
# written (the flags stay int8), and ncdump -h (netcdf-bin) reads both
# files and shows the same.
# Skips (77) without xarray or a backend: apt-get install python3-xarray
# python3-netcdf4 python3-h5netcdf (batch/deps.sh).
. "$top_srcdir/tests/odegen_lib.sh"
PY=${PYTHON_SCI:-/usr/bin/python3}
"$PY" -c 'import xarray, h5py' > /dev/null 2>&1 || { echo "SKIP: no xarray and h5py in $PY (apt-get install python3-xarray)"; exit 77; }
engines=$("$PY" -c '
import importlib.util as u
print(" ".join(e for e, m in (("netcdf4", "netCDF4"), ("h5netcdf", "h5netcdf")) if u.find_spec(m)))')
[ -n "$engines" ] || { echo "SKIP: xarray has no HDF5 backend (apt-get install python3-netcdf4 or python3-h5netcdf)"; exit 77; }
ARGS="-n 90 --nt 7 --t1 3 --seed 4 -s lorenz"
odegen 2 -q $ARGS --out "$T/plain.h5" || fail "plain run"
mkdir "$T/sh"
for i in 0 1 2; do odegen 1 -q $ARGS --shard $i/3 --out "$T/sh/ode.h5" || fail "shard $i"; done
odegen 1 -q --join 3 --out "$T/sh/ode.h5" || fail "join"
(cd / && "$PY" - "$T/plain.h5" "$T/sh/ode.h5" $engines <<'EOF') || fail "xarray"
import sys, h5py, numpy as np, xarray as xr
plain, joined, engines = sys.argv[1], sys.argv[2], sys.argv[3:]
ref = h5py.File(plain, "r")
t, y = ref["t"][...], ref["y"][...]
N, NT, D = y.shape

def check(path, engine):
    ds = xr.open_dataset(path, engine=engine)
    what = "%s (%s)" % (path.split("/")[-1], engine or "default: " + xr.backends.plugins.guess_engine(path))
    assert dict(ds.sizes) == {"traj": N, "t": NT, "component": D}, (what, dict(ds.sizes))
    assert ds.y.dims == ("traj", "t", "component") and ds.x0.dims == ("traj", "component"), what
    assert np.array_equal(ds.t.values, t) and np.array_equal(ds.traj.values, np.arange(N)), what
    assert np.array_equal(ds.component.values, np.arange(D)), what
    k = 4
    assert np.array_equal(ds.y.sel(t=t[k]).values, y[:, k, :]), what + ": sel(t=...)"
    assert np.array_equal(ds.y.sel(t=t[k] + 1e-9, method="nearest").values, y[:, k, :]), what
    assert np.array_equal(ds.y.sel(traj=7).values, y[7]), what
    for v in ("t", "y", "x0", "traj", "component"):
        assert ds[v].attrs.get("long_name"), (what, v, "no long_name")
    st = xr.open_dataset(path, engine=engine, group="stats")
    assert st.status.dims == ("traj",) and st.nsteps.dims == ("traj",), what
    assert not [d for d in list(ds.dims) + list(st.dims) if d.startswith("phony_dim")], what
    if "done" in st:
        assert st.done.dims == ("chunk",) and "internal" in st.done.attrs, what
    # CF
    assert ds.attrs.get("Conventions") == "CF-1.10", (what, ds.attrs.get("Conventions"))
    for v in ("t", "y", "x0"):
        assert ds[v].attrs.get("units") == "1", (what, v, ds[v].attrs.get("units"))
    for v in ("nsteps", "nfev", "nrejected"):
        assert st[v].attrs.get("units") == "1", (what, v)
    raw = xr.open_dataset(path, engine=engine, group="stats", decode_cf=False)
    dec = xr.decode_cf(raw)
    assert dec.status.dtype == np.int8 and np.array_equal(dec.status.values, ref["stats/status"][...]), what
    fv = np.asarray(dec.status.attrs["flag_values"])
    assert fv.dtype == np.int8 and list(fv) == [0, 1, -1, -2, -3, -127, -128], (what, fv)
    fm = dec.status.attrs["flag_meanings"].split()
    assert fm == ["ok", "terminal_event", "step_size_underflow", "non_finite", "max_steps_used_up", "missing", "not_computed"], fm
    assert "legend" not in dec.status.attrs, what
    xr.decode_cf(xr.open_dataset(path, engine=engine, decode_cf=False))
    for d in ds.dims:
        assert d in ds.coords, (what, d, "no coordinate")
    for d in st.dims:
        assert d in st.coords or d in ds.coords, (what, d, "no coordinate in stats or the root")
    print("ok: %s: dims %s, y.sel(t=%g) as h5py reads it; CF: Conventions, units, flags" % (what, dict(ds.sizes), t[k]))
    return ds

for engine in [None] + engines:
    a, b = check(plain, engine), check(joined, engine)
    assert a.y.equals(b.y) and a.x0.equals(b.x0), "joined differs from plain"
EOF
# ncdump (netCDF's own reader) on both files
if command -v ncdump > /dev/null 2>&1; then
    for f in "$T/plain.h5" "$T/sh/ode.h5"; do
        ncdump -h "$f" > "$T/cdl" 2>&1 || { cat "$T/cdl"; fail "ncdump -h $f"; }
        for want in ':Conventions = "CF-1.10" ;' 'status:flag_values = 0b, 1b, -1b, -2b, -3b, -127b, -128b ;' \
            'status:flag_meanings = "ok terminal_event step_size_underflow non_finite max_steps_used_up missing not_computed" ;' \
            'y:units = "1" ;' 't:units = "1" ;' 'double t(t) ;' 'int64 traj(traj) ;' 'int64 component(component) ;' \
            'byte status(traj) ;'; do
            grep -qF -- "$want" "$T/cdl" || { cat "$T/cdl"; fail "ncdump -h $f: no '$want'"; }
        done
        # the run's bookkeeping over chunk (a joined file has none)
        [ "$f" != "$T/plain.h5" ] || grep -qF 'int64 chunk(chunk) ;' "$T/cdl" || fail "ncdump -h $f: no chunk coordinate"
        echo "ok: ncdump -h $(basename "$f"): CF-1.10, the flags, units, a coordinate per dimension"
    done
else
    echo "(ncdump not installed, apt-get install netcdf-bin: not checked with netCDF's own reader)"
fi
echo "odegen_xarray: xarray sees named dimensions in plain and joined files"
