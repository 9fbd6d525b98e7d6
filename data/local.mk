# data/local.mk - the data side (docs/data.md): the file kinds' schemas,
# installed under $(pkgdatadir)/data/schemas and built into libhpc (every
# program checks its inputs against the same text); the converters and
# the scripts that make real data sets, installed under $(pkgdatadir)/data.
DATA_SCHEMAS = data/schemas/odegen.json data/schemas/odegen-joined.json data/schemas/train-xy.json \
	data/schemas/train-labels.json data/schemas/model.json data/schemas/checkpoint.json \
	data/schemas/matrix.json data/schemas/matmul-output.json data/schemas/metrics.json
dataschemasdir = $(pkgdatadir)/data/schemas
dist_dataschemas_DATA = $(DATA_SCHEMAS)
EXTRA_DIST += data/embed.sh

nodist_libhpc_libio_la_SOURCES = libhpc/app/schema_texts.c
BUILT_SOURCES += libhpc/app/schema_texts.c
CLEANFILES += libhpc/app/schema_texts.c
libhpc/app/schema_texts.c: $(DATA_SCHEMAS:%=$(top_srcdir)/%) $(top_srcdir)/data/embed.sh
	$(AM_V_GEN)$(MKDIR_P) libhpc/app && \
	$(SHELL) $(top_srcdir)/data/embed.sh $(DATA_SCHEMAS:%=$(top_srcdir)/%) > $@.tmp && mv $@.tmp $@

# the converters (docs/data.md, "Converting"): hpc-convert in bin, its
# module beside hpckit_torch.py (which writes TensorDatasets through it)
dist_bin_SCRIPTS = data/hpc-convert
dist_trainpython_DATA += data/hpckit_data.py
EXTRA_DIST += data/schema-tables.sh

# real data sets from what Debian ships (scikit-learn's bundled files),
# their peers, and the benchmarks (docs/train.md, "A real data set")
datadatadir = $(pkgdatadir)/data
dist_datadata_SCRIPTS = data/datasets.py data/peers.py data/bench_digits.sh data/bench_convert.sh
