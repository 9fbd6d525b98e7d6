# examples/local.mk - a program of a user's own on libhpc, a plain MPI
# program for the PMPI drop-in, and the Makefile that builds them with
# pkg-config, installed under
# PREFIX/share/hpckit/examples (`pkg-config --variable=examplesdir
# libhpc`) to be copied and changed.  The README shows hello.c; the docs
# runner and tests/install.sh build and run it from an install.
examplesdir = $(pkgdatadir)/examples
dist_examples_DATA = examples/hello.c examples/mpi_allreduce.c examples/Makefile
