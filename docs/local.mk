# docs/local.mk - what a user reads after `make install`: the README and
# the guides under $(docdir) (PREFIX/share/doc/hpckit, where --help's
# "Guide:" line points), a man page per program, made from its --help by
# help2man where it is installed, and a modulefile for Environment
# Modules and Lmod.
dist_doc_DATA = README.md docs/architecture.md docs/cluster.md docs/collectives.md docs/matmul.md docs/odegen.md \
	docs/train.md docs/data.md docs/collbench-allreduce.png docs/train-loss.png docs/train-pipe.png

# Man pages: built, not shipped (they are --help, which the build has);
# one for each of the programs (HPC_PROGS, Makefile.am).
# The programs start MPI for --help, as a singleton; HPC_* settings and
# launcher variables of the caller's shell are cleared so the text is the
# program's own.
if HAVE_HELP2MAN
HPC_MANS = $(HPC_PROGS:=.1)
nodist_man1_MANS = $(HPC_MANS)
CLEANFILES += $(HPC_MANS)
$(HPC_MANS): %.1: % programs.list $(top_srcdir)/docs/man-see-also.sh $(top_srcdir)/docs/man-names.txt
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/docs/man-see-also.sh $(docdir) $(@F:.1=) programs.list > $@.inc && \
	env -u HPC_LOG -u HPC_PROGRESS -u SLURM_JOB_ID -u PMI_RANK -u OMPI_COMM_WORLD_RANK \
	  $(HELP2MAN) --no-info --section=1 --include=$@.inc \
	    --name="`sed -n 's/^$(@F:.1=) - //p' $(top_srcdir)/docs/man-names.txt`" \
	    --output=$@.tmp ./$< && rm -f $@.inc && mv $@.tmp $@
endif
EXTRA_DIST += docs/man-see-also.sh docs/man-names.txt

# Bash completion, made from each program's option table (--list-options)
# at build time like the man pages; installed where bash-completion looks
# (PREFIX/share/bash-completion/completions, on XDG_DATA_DIRS after
# module load hpckit).
HPC_COMPLETIONS = $(HPC_PROGS:=.bash)
bashcompdir = $(datarootdir)/bash-completion/completions
nodist_bashcomp_DATA = $(HPC_COMPLETIONS)
CLEANFILES += $(HPC_COMPLETIONS)
$(HPC_COMPLETIONS): %.bash: % $(top_srcdir)/docs/completion.sh
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/docs/completion.sh ./$< $(@F:.bash=) > $@.tmp && mv $@.tmp $@
EXTRA_DIST += docs/completion.sh

# Section-3 man pages of the public C API (a page per function, per
# header, libhpc.3), made from the installed headers' comments at build
# time (docs/man3.sh; it fails on a declaration without a comment).  Their
# names come from the headers, so they are installed by a rule of ours.
man3dir = $(mandir)/man3
man3-pages: man3/.stamp
man3/.stamp: $(include_HEADERS:%=$(top_srcdir)/%) $(top_srcdir)/docs/man3.sh
	$(AM_V_GEN)rm -rf man3 && $(SHELL) $(top_srcdir)/docs/man3.sh '$(VERSION)' man3 \
	  $(include_HEADERS:%=$(top_srcdir)/%) && touch $@
all-local: man3-pages
install-data-local: install-man3
install-man3: man3-pages
	$(MKDIR_P) $(DESTDIR)$(man3dir)
	$(INSTALL_DATA) man3/*.3 $(DESTDIR)$(man3dir)
uninstall-local: uninstall-man3
uninstall-man3:
	@for f in man3/*.3; do rm -f $(DESTDIR)$(man3dir)/`basename $$f`; done
clean-local: man3-clean
man3-clean:
	rm -rf man3
.PHONY: man3-pages install-man3 uninstall-man3 man3-clean
EXTRA_DIST += docs/man3.sh

# The modulefile: PREFIX/share/hpckit/modulefiles/hpckit/VERSION.  It finds
# the prefix from its own place, so a prefix moved whole keeps working.
modulefiledir = $(pkgdatadir)/modulefiles/hpckit
install-data-hook: install-modulefile
install-modulefile:
	$(MKDIR_P) $(DESTDIR)$(modulefiledir)
	$(SHELL) $(top_srcdir)/docs/modulefile.sh '$(VERSION)' '$(prefix)' '$(modulefiledir)' '$(bindir)' \
	  '$(libdir)' '$(includedir)' '$(mandir)' '$(docdir)' '$(pkgdatadir)' '$(bashcompdir)' '$(HPC_PROGS)' \
	  > $(DESTDIR)$(modulefiledir)/$(VERSION)
uninstall-modulefile:
	rm -f $(DESTDIR)$(modulefiledir)/$(VERSION)
.PHONY: install-modulefile uninstall-modulefile
EXTRA_DIST += docs/modulefile.sh docs/settings-table.sh
