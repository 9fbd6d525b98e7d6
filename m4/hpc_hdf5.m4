# hpc_hdf5.m4 - parallel HDF5 built against the same MPI as CC.
AC_DEFUN([HPC_CHECK_HDF5], [
  AS_CASE([$HPC_MPI_FLAVOR],
    [mpich],   [hpc_h5_pc=hdf5-mpich;   hpc_h5_pkg=libhdf5-mpich-dev],
    [openmpi], [hpc_h5_pc=hdf5-openmpi; hpc_h5_pkg=libhdf5-openmpi-dev],
               [hpc_h5_pc=hdf5;         hpc_h5_pkg=libhdf5-mpi-dev])
  # libhpc.pc requires the same module (hpc_h5.h includes hdf5.h), or,
  # where the user gave the flags, carries them itself
  HPC_PC_HDF5_REQUIRES=""; HPC_PC_HDF5_CFLAGS=$HDF5_CFLAGS; HPC_PC_HDF5_LIBS=$HDF5_LIBS
  AS_IF([test -z "$HDF5_CFLAGS$HDF5_LIBS"],
        [HPC_PC_HDF5_REQUIRES=$hpc_h5_pc
         PKG_CHECK_MODULES([HDF5], [$hpc_h5_pc], [],
           [AC_MSG_ERROR([parallel HDF5 for $HPC_MPI_FLAVOR not found: apt-get install $hpc_h5_pkg (or set HDF5_CFLAGS/HDF5_LIBS)])])])
  hpc_save_CPPFLAGS=$CPPFLAGS; hpc_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $HDF5_CFLAGS"; LIBS="$HDF5_LIBS $LIBS"
  AC_MSG_CHECKING([that HDF5 is built for parallel I/O])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#ifndef H5_HAVE_PARALLEL
# error serial HDF5
#endif]], [[hid_t p = H5Pcreate(H5P_FILE_ACCESS); return H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL) < 0;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([HDF5 found is not parallel or not for $HPC_MPI_FLAVOR: apt-get install $hpc_h5_pkg])])
  # the dimension scales (H5DS) are in HDF5's high-level library, which
  # Debian ships beside the parallel one (libhdf5_mpich_hl: -lhdf5_hl in
  # the same folder) but its .pc does not name
  AC_MSG_CHECKING([for HDF5's high-level library (H5DS dimension scales)])
  hpc_h5_hl=
  for hpc_try in "" "-lhdf5_hl"; do
    LIBS="$hpc_try $HDF5_LIBS $hpc_save_LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <hdf5.h>
#include <hdf5_hl.h>]], [[return H5DSset_scale(-1, "x") < 0;]])], [hpc_h5_hl=yes; break])
  done
  AS_IF([test "$hpc_h5_hl" = yes],
        [AC_MSG_RESULT([${hpc_try:-in HDF5_LIBS}]); AS_IF([test -n "$hpc_try"], [HDF5_LIBS="$hpc_try $HDF5_LIBS"])
         HPC_PC_HDF5_HL=$hpc_try],
        [AC_MSG_RESULT([no]); AC_MSG_ERROR([HDF5's high-level library (hdf5_hl) not found beside the parallel HDF5: apt-get install $hpc_h5_pkg (or add it to HDF5_LIBS)])])
  CPPFLAGS=$hpc_save_CPPFLAGS; LIBS=$hpc_save_LIBS
  AC_PATH_PROGS([H5DUMP], [h5dump], [])
  AC_SUBST([HPC_PC_HDF5_REQUIRES])
  AC_SUBST([HPC_PC_HDF5_CFLAGS])
  AC_SUBST([HPC_PC_HDF5_LIBS])
  AC_SUBST([HPC_PC_HDF5_HL])
])
