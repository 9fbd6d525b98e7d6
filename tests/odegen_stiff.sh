#!/bin/sh
# odegen_stiff.sh - the implicit method (--method BDF: SUNDIALS CVODE)
# on stiff systems against scipy's BDF and Radau (tests/odegen_stiff.py:
# each within the tolerances of a Radau reference at rtol 1e-12, hpc-odegen
# no further off than 10 tolerances or 10x scipy BDF's own error), with
# the steps and evaluations side by side:
#  - Robertson's chemical kinetics (robertson.c, with a Jacobian),
#  - van der Pol with mu = 1000 (the built-in, its Jacobian),
#  - the 1-D Brusselator, reaction and diffusion, dim 100 (brusselator.c,
#    no Jacobian: difference quotients);
# the same bits on 1 and 3 ranks; events with BDF (a ball thrown up)
# against RK45's at tight tolerances; BDF on the GPU refused.
# The same for --method ESDIRK (SUNDIALS ARKODE's ESDIRK4(3)6L[2]SA, the
# implicit Runge-Kutta method), unless built without ARKODE; SDIRK and
# Radau refused with one line.  Skips without SUNDIALS.
. "$top_srcdir/tests/odegen_lib.sh"
need_h5diff
SYS=$top_srcdir/tests/odegen_systems
if "$ODEGEN" -m BDF -n 1 --nt 2 --out "$T/probe.h5" 2>&1 | grep -q "without SUNDIALS"; then
    echo "SKIP: hpc-odegen built without SUNDIALS"
    exit 77
fi
STIFF="$PYTHON_SCI -W ignore $top_srcdir/tests/odegen_stiff.py"
set -e

step "Robertson, van der Pol mu=1000, Brusselator dim 100 against scipy BDF and Radau"
odegen 2 -q -m BDF --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --out "$T/rob.h5" || fail "robertson"
odegen 2 -q -m BDF -s vanderpol -p mu=1000 --x0-low 1 --x0-high 2 --t1 1000 --nt 11 -n 20 \
    --rtol 1e-6 --atol 1e-8 --out "$T/vdp.h5" || fail "vanderpol"
odegen 2 -q -m BDF --system-file "$SYS/brusselator.c" --x0-low 0 --x0-high 0.5 --t1 10 --nt 11 -n 8 \
    --rtol 1e-6 --atol 1e-8 --out "$T/bru.h5" || fail "brusselator"
if [ -n "$PYTHON_SCI" ]; then
    $STIFF "$T/rob.h5" --n 2 || fail "robertson differs from scipy"
    $STIFF "$T/vdp.h5" --n 1 || fail "vanderpol mu=1000 differs from scipy"
    $STIFF "$T/bru.h5" --n 1 || fail "brusselator differs from scipy"
fi

step "the same bits on 1 and 3 ranks"
odegen 1 -q -m BDF --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --chunk 7 --out "$T/rob1.h5" || fail "1 rank"
odegen 3 -q -m BDF --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --chunk 7 --out "$T/rob3.h5" || fail "3 ranks"
same_data "$T/rob1.h5" "$T/rob3.h5" || fail "BDF: 1 and 3 ranks differ"
for d in /y /stats/nsteps /stats/nfev; do
    "$H5DIFF" -q "$T/rob.h5" "$T/rob1.h5" "$d" "$d" || fail "BDF: $d depends on --chunk"
done

step "events with BDF: a ball thrown up, against RK45"
for m in BDF RK45; do
    odegen 1 -q -m $m --system-file "$SYS/ball.c" -n 10 --t1 3 --nt 31 --rtol 1e-10 --atol 1e-12 \
        --out "$T/ball-$m.h5" || fail "ball $m"
done
if [ -n "$PYTHON_SCI" ]; then
    "$PYTHON_SCI" - "$T/ball-BDF.h5" "$T/ball-RK45.h5" <<'PY' || fail "events with BDF"
import sys, h5py, numpy as np
b, r = (h5py.File(f, "r") for f in sys.argv[1:])
assert (b["stats/status"][...] == 1).all() and (r["stats/status"][...] == 1).all()
for e in ("ground", "apex"):
    assert (b["events/%s/count" % e][...] == r["events/%s/count" % e][...]).all(), e
    d = np.nanmax(np.abs(b["events/%s/t" % e][...] - r["events/%s/t" % e][...]))
    assert d < 1e-6, (e, d)
yb, yr = b["y"][...], r["y"][...]
assert (np.isnan(yb) == np.isnan(yr)).all(), "the grid after the ground: NaN in both"
assert np.nanmax(np.abs(yb - yr)) < 1e-6
print("odegen_stiff: ball with BDF: statuses, event counts as RK45's, times within %.1e" % d)
PY
fi

step "BDF on the GPU, SDIRK: one line, exit 2"
set +e
"$ODEGEN" -m BDF --device cuda -n 10 --out "$T/x.h5" 2> "$T/stderr"
one_line_error $? 2 "BDF on the GPU" hpc-odegen
"$ODEGEN" -m SDIRK -n 10 --out "$T/x.h5" 2> "$T/stderr"
one_line_error $? 2 "SDIRK" hpc-odegen
"$ODEGEN" -m Radau -n 10 --out "$T/x.h5" 2> "$T/stderr"
one_line_error $? 2 "Radau" hpc-odegen
grep -q "ESDIRK" "$T/stderr" || fail "the line for Radau does not point at ESDIRK: $(cat "$T/stderr")"
set -e

# (CVODE's own limit counts the steps of one call, one step here: before
# the fix the limit never fired and these trajectories reached t1)
step "--max-steps with BDF: status -3"
odegen 1 -q -m BDF --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 4 \
    --rtol 1e-6 --atol 1e-10 --max-steps 5 --out "$T/max.h5" || fail "BDF --max-steps"
"$H5DUMP" -d /stats/status "$T/max.h5" | grep -q -- '-3, -3, -3, -3' || fail "BDF: --max-steps 5 not status -3"
"$H5DUMP" -d /stats/nsteps "$T/max.h5" | grep -q -- '(0): [1-5], [1-5], [1-5], [1-5]$' ||
    fail "BDF: --max-steps 5 and more steps: $("$H5DUMP" -d /stats/nsteps "$T/max.h5" | grep '(0)')"

if "$ODEGEN" -m ESDIRK -n 1 --nt 2 --out "$T/probe.h5" 2>&1 | grep -q "without SUNDIALS ARKODE"; then
    echo "odegen_stiff.sh: BDF checks passed; ESDIRK skipped (built without SUNDIALS ARKODE)"
    exit 0
fi
step "ESDIRK: Robertson, van der Pol mu=1000, Brusselator dim 100 against scipy BDF and Radau"
odegen 2 -q -m ESDIRK --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --out "$T/erob.h5" || fail "ESDIRK robertson"
odegen 2 -q -m ESDIRK -s vanderpol -p mu=1000 --x0-low 1 --x0-high 2 --t1 1000 --nt 11 -n 20 \
    --rtol 1e-6 --atol 1e-8 --out "$T/evdp.h5" || fail "ESDIRK vanderpol"
odegen 2 -q -m ESDIRK --system-file "$SYS/brusselator.c" --x0-low 0 --x0-high 0.5 --t1 10 --nt 11 -n 8 \
    --rtol 1e-6 --atol 1e-8 --out "$T/ebru.h5" || fail "ESDIRK brusselator"
if [ -n "$PYTHON_SCI" ]; then
    $STIFF "$T/erob.h5" --n 2 || fail "ESDIRK: robertson differs from scipy"
    $STIFF "$T/evdp.h5" --n 1 || fail "ESDIRK: vanderpol mu=1000 differs from scipy"
    $STIFF "$T/ebru.h5" --n 1 || fail "ESDIRK: brusselator differs from scipy"
fi
"$H5DUMP" -a /method "$T/erob.h5" | grep -q '"ESDIRK"' || fail "ESDIRK: the file's method attribute"

step "ESDIRK: the same bits on 1 and 3 ranks and for another --chunk"
odegen 1 -q -m ESDIRK --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --chunk 7 --out "$T/erob1.h5" || fail "ESDIRK 1 rank"
odegen 3 -q -m ESDIRK --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 40 \
    --rtol 1e-6 --atol 1e-10 --chunk 7 --out "$T/erob3.h5" || fail "ESDIRK 3 ranks"
same_data "$T/erob1.h5" "$T/erob3.h5" || fail "ESDIRK: 1 and 3 ranks differ"
for d in /y /stats/nsteps /stats/nfev; do
    "$H5DIFF" -q "$T/erob.h5" "$T/erob1.h5" "$d" "$d" || fail "ESDIRK: $d depends on --chunk"
done

step "events with ESDIRK: a ball thrown up, against RK45"
odegen 1 -q -m ESDIRK --system-file "$SYS/ball.c" -n 10 --t1 3 --nt 31 --rtol 1e-10 --atol 1e-12 \
    --out "$T/ball-ESDIRK.h5" || fail "ball ESDIRK"
if [ -n "$PYTHON_SCI" ]; then
    "$PYTHON_SCI" - "$T/ball-ESDIRK.h5" "$T/ball-RK45.h5" <<'PY' || fail "events with ESDIRK"
import sys, h5py, numpy as np
b, r = (h5py.File(f, "r") for f in sys.argv[1:])
assert (b["stats/status"][...] == 1).all() and (r["stats/status"][...] == 1).all()
for e in ("ground", "apex"):
    assert (b["events/%s/count" % e][...] == r["events/%s/count" % e][...]).all(), e
    d = np.nanmax(np.abs(b["events/%s/t" % e][...] - r["events/%s/t" % e][...]))
    assert d < 1e-6, (e, d)
yb, yr = b["y"][...], r["y"][...]
assert (np.isnan(yb) == np.isnan(yr)).all(), "the grid after the ground: NaN in both"
assert np.nanmax(np.abs(yb - yr)) < 1e-6
print("odegen_stiff: ball with ESDIRK: statuses, event counts as RK45's, times within %.1e" % d)
PY
fi

step "ESDIRK: --max-steps (status -3), --t-eval, on the GPU refused"
odegen 1 -q -m ESDIRK --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --nt 11 -n 4 \
    --rtol 1e-6 --atol 1e-10 --max-steps 5 --out "$T/emax.h5" || fail "ESDIRK --max-steps"
"$H5DUMP" -d /stats/status "$T/emax.h5" | grep -q -- '-3, -3, -3, -3' || fail "ESDIRK: --max-steps 5 not status -3"
printf '0 0.5 3 17.25 100\n' > "$T/teval"
odegen 1 -q -m ESDIRK --system-file "$SYS/robertson.c" --x0-low 0.5 --x0-high 1 --t1 100 --t-eval "$T/teval" \
    -n 40 --rtol 1e-6 --atol 1e-10 --out "$T/etev.h5" || fail "ESDIRK --t-eval"
"$H5DIFF" -q "$T/erob.h5" "$T/etev.h5" /stats/nsteps /stats/nsteps || fail "ESDIRK: --t-eval changed the steps"
if [ -n "$PYTHON_SCI" ]; then
    $STIFF "$T/etev.h5" --n 2 || fail "ESDIRK --t-eval differs from scipy"
fi
set +e
"$ODEGEN" -m ESDIRK --device cuda -n 10 --out "$T/x.h5" 2> "$T/stderr"
one_line_error $? 2 "ESDIRK on the GPU" hpc-odegen
step "done"
echo "odegen_stiff.sh: all checks passed"
