# apps/train/local.mk - hpc-train: data-parallel, sharded and pipelined MLP training.
bin_PROGRAMS += apps/train/hpc-train
# everything but main.c, shared with the tests that drive the pieces
TRAIN_CORE = \
	apps/train/options.c \
	apps/train/data.c \
	apps/train/stats.c \
	apps/train/loader.c \
	apps/train/model.c \
	apps/train/layer.c \
	apps/train/act.c \
	apps/train/loss.c \
	apps/train/optim.c \
	apps/train/opt_kernels.h \
	apps/train/lr_schedule.c \
	apps/train/cpu.c \
	apps/train/hold.c \
	apps/train/batch.c \
	apps/train/dp.c \
	apps/train/strategy.c \
	apps/train/strat_dp.c \
	apps/train/strat_shard.c \
	apps/train/strat_common.c \
	apps/train/zero.c \
	apps/train/pipe.c \
	apps/train/pipe_run.c \
	apps/train/pipe_sched.c \
	apps/train/pipe_stale.c \
	apps/train/pipe_predict.c \
	apps/train/optim_predict.c \
	apps/train/timeline.c \
	apps/train/pipe.h \
	apps/train/loop.c \
	apps/train/checkpoint.c \
	apps/train/metrics.c \
	apps/train/train.h \
	apps/train/dev.h \
	apps/train/act_math.h
apps_train_hpc_train_SOURCES = apps/train/main.c $(TRAIN_CORE)
# the elementwise kernels vectorise only with a cost model that allows a
# scalar epilogue (GCC's -O2 default does not), and sqrtf only without
# errno (IEEE sqrt is exact either way); no fast-math: every element
# rounds as in scalar code
# and no fused multiply-add contraction (GCC's default in GNU C modes and
# on aarch64): the GPU's kernels (--fmad=false) round as these do
TRAIN_CFLAGS = $(AM_CFLAGS) -fvect-cost-model=dynamic -fno-math-errno -ffp-contract=off
apps_train_hpc_train_CFLAGS = $(TRAIN_CFLAGS)
apps_train_hpc_train_LDADD = $(LDADD) $(BLAS_LIBS)
# --device cuda: the GPU device (cuda.cu) is a module of its own,
# PREFIX/lib/hpckit/hpc-train-cuda.so, opened by cuda_load.c only when
# asked for (no CUDA runtime in the program).  cuda.cu: not in SOURCES
# (see apps/odegen/local.mk); --fmad=false: the elementwise kernels round
# as the CPU's do; cuBLAS is opened at run time (hpc_dlsyms, libhpc-core)
apps_train_hpc_train_SOURCES += apps/train/cuda_load.c
if HAVE_CUDA
pkglib_LTLIBRARIES += apps/train/hpc-train-cuda.la
apps_train_hpc_train_cuda_la_SOURCES =
apps_train_hpc_train_cuda_la_LIBADD = apps/train/cuda.lo libhpc/libhpc-core.la $(CUDA_LIBS)
apps_train_hpc_train_cuda_la_LDFLAGS = $(HPC_MODULE_LDFLAGS)
EXTRA_apps_train_hpc_train_cuda_la_DEPENDENCIES = apps/train/cuda.lo
apps/train/cuda.lo: apps/train/cuda.cu apps/train/dev.h apps/train/act_math.h apps/train/opt_kernels.h
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) --fmad=false \
		-c $(srcdir)/apps/train/cuda.cu
CLEANFILES += apps/train/cuda.lo apps/train/cuda.o apps/train/.libs/cuda.o
endif
# the Python side (docs/train.md, "PyTorch both ways")
trainpythondir = $(pkgdatadir)/python
dist_trainpython_DATA = apps/train/hpckit_torch.py
EXTRA_DIST += apps/train/cuda.cu apps/train/bench.sh apps/train/bench_pipe.sh apps/train/bench_shard.sh apps/train/torch_bench.py apps/train/bench_lib.sh
