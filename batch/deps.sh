#!/bin/sh
# deps.sh - make sure the Debian packages hpckit builds and tests with are
# installed.  As root with apt-get it installs what is missing; otherwise it
# prints the exact command to run and fails.
#
#   batch/deps.sh [mpich|openmpi ...]     (default: mpich)
set -e
pkgs="build-essential autoconf automake libtool pkg-config libopenblas-dev
librandom123-dev libsundials-dev hdf5-tools python3-numpy python3-scipy python3-h5py python3-torch gnuplot-nox
python3-xarray python3-netcdf4 python3-h5netcdf python3-sklearn netcdf-bin
slurmctld slurmd slurm-client help2man environment-modules bash-completion shellcheck"
[ $# -gt 0 ] || set -- mpich
for mpi in "$@"; do
    case $mpi in
    mpich)   pkgs="$pkgs mpich libmpich-dev libhdf5-mpich-dev libscalapack-mpich-dev" ;;
    openmpi) pkgs="$pkgs openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libscalapack-openmpi-dev" ;;
    *) echo "deps.sh: unknown MPI '$mpi' (mpich or openmpi)" >&2; exit 2 ;;
    esac
done
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: not a Debian system; make sure these (or your system's equivalents) are installed:" >&2
    echo "  $pkgs" | tr '\n' ' ' >&2; echo >&2
    exit 0
fi
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps.sh: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing >/dev/null
else
    echo "deps.sh: missing Debian packages; install them with:" >&2
    echo "  sudo apt-get install$missing" >&2
    exit 1
fi
