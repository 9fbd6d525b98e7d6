# cuda.mk - the one rule that builds .cu files, with nvcc, into libtool
# objects.  nvcc is not a compiler libtool knows, so build-aux/cudalt.sh
# compiles position-independent code and writes the .lo file itself.
NVCC_FLAGS = -O3 -std=c++17 $(NVCC_ARCH) -Xcompiler -fPIC,-Wall,-fvisibility=hidden \
	-I$(top_srcdir)/libhpc -I$(top_builddir) $(CUDA_CPPFLAGS) $(NCCL_CPPFLAGS) $(NVCCFLAGS)
SUFFIXES = .cu .lo
.cu.lo:
	$(AM_V_CC)$(SHELL) $(top_srcdir)/build-aux/cudalt.sh $@ $(NVCC) $(NVCC_FLAGS) -c $<
EXTRA_DIST += build-aux/cudalt.sh build-aux/cuda.mk
