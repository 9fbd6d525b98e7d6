# apps/info/local.mk - hpc-info: who runs where, bound to what.
bin_PROGRAMS += apps/info/hpc-info
apps_info_hpc_info_SOURCES = apps/info/info.c apps/info/show_settings.c apps/info/json_str.c apps/info/info.h
# BLAS as the programs link it: hpc-info reports the library and the
# kernel they run (and restarts as they do)
apps_info_hpc_info_LDADD = $(HPC_APP_LDADD) $(BLAS_LIBS)
# no HDF5: neither its headers nor its library (tests/needed.sh)
apps_info_hpc_info_CPPFLAGS = $(HPC_APP_CPPFLAGS)
