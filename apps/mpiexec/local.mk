# apps/mpiexec/local.mk - hpc-mpiexec, the launcher users start hpckit's
# programs with outside Slurm: a script made by make, with the launcher of
# the MPI configure found (MPIEXEC) filled in (see the script's header
# for why hpckit has one of its own).
bin_SCRIPTS += apps/mpiexec/hpc-mpiexec
CLEANFILES += apps/mpiexec/hpc-mpiexec
EXTRA_DIST += apps/mpiexec/hpc-mpiexec.in
apps/mpiexec/hpc-mpiexec: $(top_srcdir)/apps/mpiexec/hpc-mpiexec.in Makefile
	$(AM_V_GEN)$(MKDIR_P) apps/mpiexec && \
	srun_mpi=pmi2; test '$(HPC_MPI_FLAVOR)' = openmpi && srun_mpi=pmix; \
	sed -e 's|@MPIEXEC[@]|$(MPIEXEC)|g' -e 's|@HPC_MPI_FLAVOR[@]|$(HPC_MPI_FLAVOR)|g' \
	    -e "s|@SRUN_MPI[@]|$$srun_mpi|g" $(top_srcdir)/apps/mpiexec/hpc-mpiexec.in > $@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
