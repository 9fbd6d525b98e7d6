# docs/local.mk - what a user reads after `make install`: the README and
# the guides under $(docdir) (PREFIX/share/doc/hpckit, where --help's
# "Guide:" line points), a man page per program, made from its --help by
# help2man where it is installed, and a modulefile for Environment
# Modules and Lmod.
dist_doc_DATA = README.md docs/architecture.md docs/collectives.md docs/matmul.md docs/odegen.md \
	docs/train.md docs/data.md docs/collbench-allreduce.png docs/train-loss.png docs/train-pipe.png

# Man pages: built, not shipped (they are --help, which the build has).
# The programs start MPI for --help, as a singleton; HPC_* settings and
# launcher variables of the caller's shell are cleared so the text is the
# program's own.
if HAVE_HELP2MAN
HPC_MANS = apps/info/hpc-info.1 apps/collbench/hpc-collbench.1 apps/odegen/hpc-odegen.1 \
	apps/matmul/hpc-matmul.1 apps/train/hpc-train.1 \
	apps/h5check/hpc-h5check.1
nodist_man1_MANS = $(HPC_MANS)
CLEANFILES += $(HPC_MANS)
$(HPC_MANS): %.1: % $(top_srcdir)/docs/man-see-also.sh $(top_srcdir)/docs/man-names.txt
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/docs/man-see-also.sh $(docdir) $(@F:.1=) > $@.inc && \
	env -u HPC_LOG -u HPC_PROGRESS -u SLURM_JOB_ID -u PMI_RANK -u OMPI_COMM_WORLD_RANK \
	  $(HELP2MAN) --no-info --section=1 --include=$@.inc \
	    --name="`sed -n 's/^$(@F:.1=) - //p' $(top_srcdir)/docs/man-names.txt`" \
	    --output=$@.tmp ./$< && rm -f $@.inc && mv $@.tmp $@
endif
EXTRA_DIST += docs/man-see-also.sh docs/man-names.txt

# The modulefile: PREFIX/share/hpckit/modulefiles/hpckit/VERSION.  It finds
# the prefix from its own place, so a prefix moved whole keeps working.
modulefiledir = $(pkgdatadir)/modulefiles/hpckit
install-data-hook: install-modulefile
install-modulefile:
	$(MKDIR_P) $(DESTDIR)$(modulefiledir)
	$(SHELL) $(top_srcdir)/docs/modulefile.sh '$(VERSION)' '$(prefix)' '$(modulefiledir)' '$(bindir)' \
	  '$(libdir)' '$(includedir)' '$(mandir)' '$(docdir)' '$(pkgdatadir)' > $(DESTDIR)$(modulefiledir)/$(VERSION)
uninstall-hook:
	rm -f $(DESTDIR)$(modulefiledir)/$(VERSION)
.PHONY: install-modulefile
EXTRA_DIST += docs/modulefile.sh docs/settings-table.sh
