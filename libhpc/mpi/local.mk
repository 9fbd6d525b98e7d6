# libhpc/mpi/local.mk - libhpc-mpi.so, the PMPI drop-in (issue 13):
# LD_PRELOAD it (or link it before MPI) and an unmodified MPI program's
# collectives run on libhpc.  No version suffix: LD_PRELOAD names the file.
# pmpi.c: the collectives and requests; datatype.c: MPI datatypes as
# libhpc's elements (packing); setup.c: libhpc's state for each
# communicator, made where every rank is at once.
# It links libhpc-core alone (the collectives): MPI and the C runtime,
# nothing else comes into the programs it is preloaded into.
lib_LTLIBRARIES += libhpc/mpi/libhpc-mpi.la
libhpc_mpi_libhpc_mpi_la_SOURCES = libhpc/mpi/pmpi.c libhpc/mpi/datatype.c libhpc/mpi/setup.c libhpc/mpi/pmpi.h
libhpc_mpi_libhpc_mpi_la_LIBADD = libhpc/libhpc-core.la
# RUNPATH $ORIGIN: it finds the libhpc-core.so beside itself under
# LD_PRELOAD when the prefix was moved (libtool puts the configured libdir
# first)
libhpc_mpi_libhpc_mpi_la_LDFLAGS = -avoid-version -no-undefined -Wl,--no-undefined -Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN'
