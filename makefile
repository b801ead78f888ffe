# petscgpumat: GPU sparse-matrix types for PETSc (ELLPACK-R, CMRS, RgCSR)
#
#   make            build lib/libpetscgpumat.so (provides a CUDA PETSc first: config/petsc.sh)
#   make demo       the main job: KSP solve of a built-in Laplacian comparing the matrix types
#   make check      all tests (GPU tests are skipped, with the reason, where there is no GPU)
#   make bench      a short SpMV benchmark
#   make install PREFIX=/path   library, headers and petscgpumat.pc
#   make device-pack            the archive the GPU machine needs (.device/petscgpumat-device.tar.xz)
#   make device-base            keep the library as built now as an A/B baseline (.device/base; tools/device-run.sh ab)
#   make petsc-suite            PETSc's own KSP/SNES test suite with our types beside MATAIJ (petsc-suite-ci: a subset)
#   make clean
#
# Variables: PETSC_DIR/PETSC_ARCH (an existing CUDA PETSc, 3.22 to 3.26), PETSC_VERSION (a release for
# config/petsc.sh to provide instead of the default 3.26.1, e.g. `make check PETSC_VERSION=3.22.5`: built in
# build-petsc<version>/), CUDA_ARCH (default 90), PETSC_CONFIG_FLAGS (passed to config/petsc.sh, e.g.
# --precision=single), BUILD (default build).

CUDA_ARCH          ?= 90
PETSC_VERSION      ?=
BUILD              ?= $(if $(PETSC_VERSION),build-petsc$(PETSC_VERSION),build)
PETSC_CONFIG_FLAGS ?=
PREFIX             ?= /usr/local
ROOT               := $(abspath .)

NEEDS_PETSC := $(filter-out clean help,$(or $(MAKECMDGOALS),all))
ifneq ($(NEEDS_PETSC),)
  ifeq ($(PETSC_DIR),)
    PETSC_DIR := $(shell $(ROOT)/config/petsc.sh --print=dir --cuda-arch=$(CUDA_ARCH) $(if $(PETSC_VERSION),--version=$(PETSC_VERSION)) $(PETSC_CONFIG_FLAGS))
    PETSC_ARCH :=
    ifeq ($(PETSC_DIR),)
      $(error config/petsc.sh could not provide a CUDA PETSc (see its messages above))
    endif
  endif
  PETSC_CONF := $(PETSC_DIR)/$(PETSC_ARCH)/lib/petsc/conf
  include $(PETSC_CONF)/petscvariables
  PETSC_LIBDIR := $(PETSC_DIR)/$(PETSC_ARCH)/lib
endif
export PETSC_DIR PETSC_ARCH

CC       = $(PCC)
WARN     = -Wall -Wextra
CPPFLAGS = -I$(ROOT)/include $(PETSC_CC_INCLUDES)
CFLAGS   = $(CC_FLAGS) $(WARN)
EXACT    = -ffp-contract=off # the kernels' host emulations (tests/reference/) and the tests must round as the kernels do
NVCC     = $(CUDAC)
NVFLAGS  = $(filter-out -arch=%,$(CUDAC_FLAGS)) -arch=sm_$(CUDA_ARCH) -Xcompiler -Wall $(CPPFLAGS)
# the default build goes to lib/; another BUILD (e.g. a single-precision one) keeps its library inside it
LIBDIR  ?= $(if $(filter build,$(BUILD)),$(ROOT)/lib,$(abspath $(BUILD))/lib)
LIBNAME  = $(LIBDIR)/libpetscgpumat.so
LIBDEPS  = -Wl,-rpath,$(PETSC_LIBDIR) -L$(PETSC_LIBDIR) -lpetsc -L$(CUDA_HOME_DIR)/lib64 -lcusparse -lcusolver -lcublas -lcudart -lz
CUDA_HOME_DIR = $(patsubst %/bin/nvcc,%,$(CUDAC))
# executables: our library (rpath to lib/), PETSc and its externals
EXELIBS  = -Wl,-rpath,$(LIBDIR) -L$(LIBDIR) -lpetscgpumat $(PETSC_WITH_EXTERNAL_LIB) -lz

LIB_C    := $(shell find src -name '*.c' | sort)
# CMRS's scan kernels: one source compiled into one object per (U, E) (src/cmrs/cmrs_scan.h says why)
CMRS_SCAN_SRC  := src/cmrs/cmrs_scan_instances.cu
CMRS_SCAN_OBJS := $(foreach u,1 2 4,$(foreach e,1 2 4,$(BUILD)/obj/src/cmrs/cmrs_scan_u$(u)_e$(e).o))
LIB_CU   := $(filter-out $(CMRS_SCAN_SRC),$(shell find src -name '*.cu' | sort))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_C)) $(patsubst %.cu,$(BUILD)/obj/%.o,$(LIB_CU)) $(CMRS_SCAN_OBJS)
HEADERS  := $(shell find include src tests/common tests/reference examples -name "*.h")
REF_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard tests/reference/*.c)))
TESTS    := $(patsubst %.c,$(BUILD)/%,$(shell find tests -name 'test_*.c' | sort))
EXAMPLES := $(patsubst %.c,$(BUILD)/%,$(wildcard examples/*.c))

.PHONY: all lib tests examples check demo bench install clean help device-pack device-base bench-report clients
.DEFAULT_GOAL := all

all: lib tests examples
lib: $(LIBNAME)

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

$(CMRS_SCAN_OBJS): $(BUILD)/obj/src/cmrs/cmrs_scan_u%.o: $(CMRS_SCAN_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -DCMRS_SCAN_U=$(word 1,$(subst _e, ,$*)) -DCMRS_SCAN_E=$(word 2,$(subst _e, ,$*)) -c $< -o $@

$(LIBNAME): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LIB_OBJS) $(LIBDEPS)

$(REF_OBJS): CFLAGS += $(EXACT)

$(BUILD)/tests/%: tests/%.c $(HEADERS) $(LIBNAME) $(REF_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(EXACT) $(CPPFLAGS) $< $(REF_OBJS) -o $@ $(EXELIBS)

$(BUILD)/examples/%: examples/%.c $(HEADERS) $(LIBNAME)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) $< -o $@ $(EXELIBS)

tests: $(TESTS)
examples: $(EXAMPLES)

# the tests: CPU tests always; GPU tests only where a GPU answers (otherwise skipped with the reason)
check: all
	@BUILD=$(BUILD) LIBDIR=$(LIBDIR) PETSC_DIR=$(PETSC_DIR) PETSC_ARCH=$(PETSC_ARCH) $(ROOT)/tests/run.sh

# the main job: a KSP solve of a built-in 3-D Laplacian with every type (GPU types need a GPU)
DEMO_ARGS ?= -n 48
demo: examples
	@$(ROOT)/tests/mpienv.sh $(BUILD)/examples/solve -types aij,aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda,csrcuda,autocuda $(DEMO_ARGS)

# make bench: the short suite (small generated and real matrices, every type; GPU types are skipped, with the
# reason, where no GPU answers) into $(BUILD)/bench-suite.csv; with BENCH_ARGS, one bench_spmv run instead.
# The full suite runs on the GPU machine: tools/device-run.sh suite (see docs/performance.md).
BENCH_ARGS ?=
bench: examples
	@if [ -n "$(BENCH_ARGS)" ]; then $(ROOT)/tests/mpienv.sh $(BUILD)/examples/bench_spmv $(BENCH_ARGS); \
	else python3 $(ROOT)/tools/bench_suite.py --quick --bench $(BUILD)/examples/bench_spmv --out $(BUILD)/bench-suite.csv; fi

# Markdown summary and plots of a suite CSV fetched from the GPU machine (matplotlib, here)
SUITE_CSV ?= $(BUILD)/bench-suite.csv
bench-report:
	python3 $(ROOT)/tools/bench_report.py $(SUITE_CSV) $(BUILD)/bench-summary.md --png-prefix $(BUILD)/bench-suite

install: lib
	install -d $(PREFIX)/lib $(PREFIX)/include/petscgpumat/private $(PREFIX)/lib/pkgconfig
	install -m 755 $(LIBNAME) $(PREFIX)/lib/
	install -m 644 include/petscgpumat.h include/petscgpuksp.h $(PREFIX)/include/
	install -m 644 include/petscgpumat/private/*.h $(PREFIX)/include/petscgpumat/private/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@PETSC_LIBDIR@|$(PETSC_LIBDIR)|g' config/petscgpumat.pc.in > $(PREFIX)/lib/pkgconfig/petscgpumat.pc
	@echo "installed in $(PREFIX); use: -dll_append $(PREFIX)/lib/libpetscgpumat.so -mat_type ellrcuda"

device-pack: all
	@BUILD=$(BUILD) $(ROOT)/tools/device-pack.sh

device-base: lib
	@BUILD=$(BUILD) $(ROOT)/tools/device-pack.sh --base

clean:
	rm -rf $(BUILD) $(LIBDIR)

help:
	@sed -n '2,16p' makefile | sed 's/^# \{0,1\}//'

# An unmodified PETSc tutorial (KSP ex2), built from the PETSc install, to check -dll_append
PETSC_EX2 = $(PETSC_DIR)/$(PETSC_ARCH)/share/petsc/examples/src/ksp/ksp/tutorials/ex2.c
$(BUILD)/tests/petsc_ex2: $(PETSC_EX2)
	@mkdir -p $(dir $@)
	$(CC) $(CC_FLAGS) $(PETSC_CC_INCLUDES) $< -o $@ $(PETSC_WITH_EXTERNAL_LIB)
tests: $(BUILD)/tests/petsc_ex2

# The client harness's programs: PETSc's own tutorials named in tests/clients/configs.tsv, unmodified, built from the
# PETSc install (tests/clients/clients.py runs them with each matrix type)
CLIENT_SRCS := $(shell awk -F'\t' '!/^\#/ && NF > 2 {print $$2}' tests/clients/configs.tsv | sort -u)
CLIENT_SRCS += ksp/ksp/tests/ex26 # KSPMatSolve: PCMG on blocks of right-hand sides (products with dense matrices; tests/run.sh)
CLIENT_SRCS += snes/tutorials/ex58 # a VI with Galerkin PCMG on the reduced space, whose DMs give host vectors (tests/run.sh)
CLIENT_BINS := $(addprefix $(BUILD)/clients/,$(notdir $(CLIENT_SRCS)))
define client_rule
$(BUILD)/clients/$(notdir $(1)): $(PETSC_DIR)/$(PETSC_ARCH)/share/petsc/examples/src/$(1).c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CC_FLAGS) $$(PETSC_CC_INCLUDES) $$< -o $$@ $$(PETSC_WITH_EXTERNAL_LIB)
endef
$(foreach p,$(CLIENT_SRCS),$(eval $(call client_rule,$(p))))
clients: $(CLIENT_BINS)
tests: clients

# PETSc's own test suite, run differentially (tests/petsc_suite/, docs/petsc-test-suite.md): the test commands of the
# installed KSP tutorials and tests and SNES tutorials at 1 and 2 ranks, with MATAIJ and with each of our types on host
# vectors; the example programs are built in $(BUILD)/petsc-suite, the reports go to $(BUILD)/petsc-suite-out.
# petsc-suite: the full sets (about 30 minutes on 2 cores); petsc-suite-ci: the CI subset (--ci, a few minutes; also
# in `make check`). PETSC_SUITE_ARGS adds runner options (e.g. --sets ksp-tutorials, --only REGEX, --jobs 4).
PETSC_SUITE_ARGS ?=
PETSC_SUITE = python3 $(ROOT)/tests/petsc_suite/petsc_suite.py --mode cpu --lib $(LIBNAME) --build $(BUILD)/petsc-suite \
  --out $(BUILD)/petsc-suite-out
.PHONY: petsc-suite petsc-suite-ci
petsc-suite: lib
	@$(PETSC_SUITE) $(PETSC_SUITE_ARGS)
petsc-suite-ci: lib
	@$(PETSC_SUITE) --ci $(PETSC_SUITE_ARGS)

# Fuzzing of the Matrix Market reader: libFuzzer with ASan/UBSan for FUZZ_SECONDS (default 600 here; `make check`
# runs 60 s). Crash inputs land in $(BUILD)/fuzz/artifacts/ (see tests/fuzz/fuzz.sh).
.PHONY: fuzz check-int64
fuzz:
	@BUILD=$(BUILD) PETSC_DIR=$(PETSC_DIR) PETSC_ARCH=$(PETSC_ARCH) $(ROOT)/tests/fuzz/fuzz.sh run $(or $(FUZZ_SECONDS),600)

# The tests against a PETSc with 64-bit PetscInt (config/petsc.sh --64-bit-indices: about 7 minutes to build, once;
# not part of CI), in build-int64/; the fuzzer is skipped there (FUZZ_SECONDS=0), GPU tests skip without a GPU.
check-int64:
	@env -u PETSC_DIR -u PETSC_ARCH $(MAKE) --no-print-directory BUILD=build-int64 PETSC_CONFIG_FLAGS=--64-bit-indices all
	@PETSC_DIR=$$(env -u PETSC_DIR -u PETSC_ARCH $(ROOT)/config/petsc.sh --print=dir --cuda-arch=$(CUDA_ARCH) --64-bit-indices) PETSC_ARCH= \
	  BUILD=build-int64 LIBDIR=$(ROOT)/build-int64/lib FUZZ_SECONDS=0 $(ROOT)/tests/run.sh

# A make variable's value, for tools that compile the way the library does (tools/kernel_equivalence.py)
print-%:
	@echo '$($*)'
