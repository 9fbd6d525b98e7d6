#!/bin/sh
# modulefile.sh VERSION PREFIX MODULEDIR BINDIR LIBDIR INCLUDEDIR MANDIR
#               DOCDIR PKGDATADIR BASHCOMPDIR PROGRAMS
# Writes hpckit's modulefile (Tcl: Environment Modules and Lmod read it)
# to stdout.  Folders under PREFIX are written relative to the modulefile's
# own place, so a prefix moved or copied whole still loads; others stay
# absolute.
version=$1 prefix=$2 moddir=$3
shift 3
rel() {   # rel DIR: a Tcl expression for DIR
    case $1 in
    "$prefix"/*) printf '[file join $root %s]' "${1#"$prefix"/}" ;;
    *) printf '%s' "$1" ;;
    esac
}
up=$(realpath -m --relative-to="$moddir" "$prefix" 2>/dev/null || echo ../../../..)
# PROGRAMS: the build's one list (bin_PROGRAMS, as paths): module help names
# each, a Tcl line per line of at most 76 characters
names=$(for p in $8; do printf '%s, ' "${p##*/}"; done)
progs=$(printf '%s\n' "${names%, };" | fold -s -w 76 |
        sed 's/ *$//; s/.*/    puts stderr "&"/')
cat <<EOT
#%Module1.0
## hpckit $version - SPMD jobs on GPU and CPU clusters: libhpc, the hpc-*
## programs, the Slurm scripts.  Written by make install.
proc ModulesHelp { } {
    puts stderr "hpckit $version: libhpc (pkg-config libhpc); the programs (man NAME):"
$progs
    puts stderr "the Slurm scripts in \\\$HPCKIT_BATCH (sbatch \\\$HPCKIT_BATCH/train.sh ...),"
    puts stderr "the guides in \\\$HPCKIT_DOC."
}
module-whatis "hpckit $version: MPI collectives library (libhpc), ODE datasets, matrix multiply, training, Slurm scripts"
# one hpckit at a time: two would put two MPIs' programs on PATH
conflict     hpckit
set root [file normalize [file join [file dirname \$ModulesCurrentModulefile] $up]]
setenv       HPCKIT_ROOT     \$root
setenv       HPCKIT_BATCH    $(rel "$6/batch")
setenv       HPCKIT_DOC      $(rel "$5")
# the batch scripts find the programs and each other through these
setenv       HPC_BIN         $(rel "$1")
setenv       HPC_BATCH_DIR   $(rel "$6/batch")
prepend-path PATH            $(rel "$1")
prepend-path LD_LIBRARY_PATH $(rel "$2")
prepend-path PKG_CONFIG_PATH $(rel "$2/pkgconfig")
prepend-path CPATH           $(rel "$3")
# the Python helper: python3 -c "import hpckit_torch"
prepend-path PYTHONPATH      $(rel "$6/python")
# bash completion (PREFIX/share/bash-completion/completions): bash-completion
# looks under XDG_DATA_DIRS, whose default (/usr/local/share:/usr/share)
# stays where it was unset
if {![info exists ::env(XDG_DATA_DIRS)] || \$::env(XDG_DATA_DIRS) eq ""} {
    append-path XDG_DATA_DIRS /usr/local/share
    append-path XDG_DATA_DIRS /usr/share
}
prepend-path XDG_DATA_DIRS   $(rel "${7%/bash-completion/completions}")
# MANPATH: where it was unset or empty, man searched its default path; a
# trailing ':' keeps that (man ls still works), and unloading removes it
if {![info exists ::env(MANPATH)] || \$::env(MANPATH) eq ""} { append-path MANPATH {} }
prepend-path MANPATH         $(rel "$4")
EOT
