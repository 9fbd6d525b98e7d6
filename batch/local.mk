# batch/local.mk - the Slurm scripts and the demo.
#
# The scripts are installed under $(pkgdatadir)/batch, and copied into the
# build tree's batch/, each copy with the folder of common.sh, the
# programs' folder and the MPI filled in (build-aux/fill-batch.sh): such a
# copy works from any submission folder, and so does a user's copy of it.
BATCH_JOB_FILES = batch/info.sh batch/odegen.sh batch/train.sh batch/matmul.sh \
	batch/collbench.sh batch/pipeline.sh
batchdir = $(pkgdatadir)/batch
dist_noinst_SCRIPTS = batch/demo.sh batch/deps.sh $(BATCH_JOB_FILES)
EXTRA_DIST += batch/common.sh build-aux/fill-batch.sh
FILL_BATCH = $(SHELL) $(top_srcdir)/build-aux/fill-batch.sh

all-local: batch-copies
batch-copies: $(BATCH_JOB_FILES:%=$(top_srcdir)/%) $(top_srcdir)/batch/common.sh
	@if test "$(abs_top_builddir)" != "$(abs_top_srcdir)"; then \
	  $(MKDIR_P) batch; \
	  for f in $(BATCH_JOB_FILES) batch/common.sh; do \
	    $(FILL_BATCH) $(top_srcdir)/$$f $$f $(abs_top_builddir)/batch $(abs_top_builddir) $(HPC_MPI_FLAVOR); \
	  done; \
	fi
.PHONY: batch-copies

install-data-local:
	$(MKDIR_P) $(DESTDIR)$(batchdir)
	for f in $(BATCH_JOB_FILES) batch/common.sh; do \
	  $(FILL_BATCH) $(top_srcdir)/$$f $(DESTDIR)$(batchdir)/`basename $$f` $(batchdir) $(bindir) $(HPC_MPI_FLAVOR); \
	done

uninstall-local:
	for f in $(BATCH_JOB_FILES) batch/common.sh; do rm -f $(DESTDIR)$(batchdir)/`basename $$f`; done

clean-local:
	rm -rf tests/odegen-cache
	@if test "$(abs_top_builddir)" != "$(abs_top_srcdir)"; then \
	  for f in $(BATCH_JOB_FILES) batch/common.sh; do rm -f $$f; done; \
	fi
