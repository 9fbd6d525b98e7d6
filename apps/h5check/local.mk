# apps/h5check/local.mk - hpc-h5check: a file against its kind's schema
# (the checker itself is libhpc's: libhpc/app/check*.c).
bin_PROGRAMS += apps/h5check/hpc-h5check
apps_h5check_hpc_h5check_SOURCES = apps/h5check/h5check.c
