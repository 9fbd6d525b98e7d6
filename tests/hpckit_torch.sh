#!/bin/sh
# hpckit_torch.sh - the Python module share/hpckit/python/hpckit_torch.py:
# installed by `make install` where the docs say, then tested against
# hpc-train and PyTorch (Debian's python3-torch) by tests/hpckit_torch.py:
# loading a run reproduces its validation loss, a PyTorch model becomes an
# init file that --init-from trains as PyTorch does, the optimiser state
# continues in PyTorch (from a dp and from a sharded run), init files
# that do not fit are refused.  Skips (77)
# without torch.
. "$top_srcdir/tests/train_lib.sh"
need_torch
# the install rule of the module alone, into a scratch prefix
make -s -C "$top_builddir" install-dist_trainpythonDATA DESTDIR="$T/inst" > "$T/install.log" 2>&1 ||
    { cat "$T/install.log"; fail "installing hpckit_torch.py"; }
mod=$(find "$T/inst" -name hpckit_torch.py)
case $mod in */share/hpckit/python/hpckit_torch.py) ;; *) fail "hpckit_torch.py installed as '$mod'" ;; esac
"$MKDATA" regress "$T/r.h5" 64 || fail "making r.h5"
"$MKDATA" classes "$T/c.h5" 64 || fail "making c.h5"
# lorenz with an attempt limit that some trajectories exceed (status != 0)
"$ODEGEN" -q -s lorenz -n 24 --nt 6 --t1 2 --max-steps 27 --out "$T/ode.h5" || fail "making ode.h5"
OMP_NUM_THREADS=1 MPIEXEC_WRAP=$MPIEXEC_WRAP "$PYTHON" "$top_srcdir/tests/hpckit_torch.py" "$TRAIN" "$T" "$(dirname "$mod")" \
    "$T/r.h5" "$T/c.h5" "$T/ode.h5" || fail "hpckit_torch"
echo "hpckit_torch: runs load into PyTorch and PyTorch models train in hpc-train"
