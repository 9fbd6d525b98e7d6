# apps/info/local.mk - hpc-info: who runs where, bound to what.
bin_PROGRAMS += apps/info/hpc-info
apps_info_hpc_info_SOURCES = apps/info/info.c apps/info/show_settings.c apps/info/info.h
