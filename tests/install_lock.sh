#!/bin/sh
# install_lock.sh BUILD ARGS... - make -C BUILD ARGS (an install) while no
# other test installs from the same build tree.  make install relinks
# libhpc.so inside the build tree (libtool moves .libs/libhpc.so.* aside
# meanwhile), so two at once collide; a lock lets the tests that install
# run beside each other otherwise.
b=$1
shift
exec flock "$b/.install.lock" make -C "$b" "$@"
