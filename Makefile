# fasweep - build, test and run.
#
#   make              build build/fasweep with every instance the spaces need
#   make sweep        check for a GPU, install what is missing, build, sweep it, print Top-K
#   make test         install what is missing, run every CPU test (CI space build,
#                     binary in build/ci/fasweep)
#   make test-gpu     GPU tests (needs a GPU)
#   make dist         relocatable bundle in dist/fasweep (binaries + the .so they need)
#
# Knobs: SPACES (which spaces decide the compiled instances), ARCHS (SASS
# targets; PTX of the last one is embedded too), SHARDS (translation units
# the instances are split over, for make -j), BUILD (output folder),
# DEPS (a prefix holding include/ and lib/ for lmdb, cjson, cmocka when the
# system has none, e.g. on a GPU node without a package registry; with it
# set nothing is installed, scripts/deps.sh only checks), NVEXTRA
# (extra nvcc flags, e.g. a kernel variant for scripts/bench_kernel_ab.sh),
# LOCAL=1 (a build for this machine alone: no PTX, a faster fat binary).

CUDA    ?= /usr/local/cuda
NVCC    ?= $(CUDA)/bin/nvcc
CC      ?= gcc
ARCHS   ?= 89 90
SPACES  ?= spaces/l4.json spaces/h100.json spaces/ci.json spaces/llama3-8b.json spaces/gemma2-d256.json \
           spaces/h100-mma-bf16.json
SHARDS  ?= 16
# Translation units for the instances of the families that run on sm_90a
# only (wgmma): compiled for that target alone, and only when ARCHS holds 90.
# One per core, 4 to 16: a wgmma instance compiles two heavy kernels (one-tile
# and persistent), so with 4 units on 16 cores the last unit was the build's
# critical path (sweep/NOTES-engine.md: the main job's build step).
ifeq ($(origin SHARDS_90A),undefined)
SHARDS_90A := $(shell n=$$(nproc 2>/dev/null || echo 4); [ "$$n" -ge 4 ] 2>/dev/null || n=4; \
                [ "$$n" -le 16 ] || n=16; echo $$n)
endif
BUILD   ?= build
# Kernel objects can live in another build folder (the sanitizer build
# reuses the plain build's: nvcc code is not instrumented anyway).
KBUILD  ?= $(BUILD)
DEPS    ?=
SAN     ?=
VERSION := 0.1.0

PKGS     := lmdb libcjson
ifeq ($(DEPS),)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null || echo -I/usr/include/cjson)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -llmdb -lcjson)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
else
PKG_CFLAGS := -I$(DEPS)/include -I$(DEPS)/include/cjson
PKG_LIBS   := -L$(DEPS)/lib -Wl,-rpath,$(abspath $(DEPS))/lib -llmdb -lcjson
CMOCKA_LIBS := -L$(DEPS)/lib -lcmocka
# The bundle's bats (scripts/vendor_deps.sh copies it) for `make cli`.
export PATH := $(PATH):$(abspath $(DEPS))/bats/bin
endif

WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE $(WARN) -I. -I$(CUDA)/include $(PKG_CFLAGS) \
           -DFASWEEP_VERSION=\"$(VERSION)\" -DFASWEEP_CUDA=\"$(CUDA)\"
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif
# One copy of the kernels: every instance, the reference and the test
# kernels are one shared library that fasweep, fa_check and fa_bench load
# (with the CUDA runtime as a shared library too, so the three and the
# library share one runtime). The binaries look for it, and for LMDB and
# cJSON, in lib/ beside themselves (the build tree) or ../lib (the `make
# dist` bundle) first, so the bundle runs anywhere; the toolkit's and the
# system's libraries otherwise.
KLIB    := $(KBUILD)/lib/libfasweep_kernels.so
CUDA_LIBS := -L$(dir $(KLIB)) -lfasweep_kernels -L$(CUDA)/lib64 -lcudart -lrt -lpthread -ldl -lm
RPATH := -Wl,-rpath,'$$ORIGIN/lib:$$ORIGIN/../lib:$(CUDA)/lib64'


# SASS for each arch in ARCHS, plus PTX for the newest so later GPUs can JIT.
# --compress-mode=size: the fat binary is about 5x smaller than nvcc's
# default compression (1.66 MB -> 0.30 MB for 4 instances x 2 archs).
# LOCAL=1 (the main job, scripts/run_default_sweep.sh: a build that runs on
# this machine's GPU only) leaves both out: the PTX no later GPU will JIT,
# and the size mode's fatbinary step, 0.6-1.7 s of each unit's 7-10 s of
# CPU (sweep/NOTES-engine.md, thirteenth session). The SASS is the same.
LOCAL   ?=
ifneq ($(filter-out 1,$(LOCAL)),)
$(error LOCAL=$(LOCAL): only 1 (a build for this machine's GPU alone) or unset)
endif
LAST_ARCH := $(lastword $(ARCHS))
GENCODE := $(foreach a,$(ARCHS),-gencode=arch=compute_$(a),code=sm_$(a))
FATBIN  :=
ifneq ($(LOCAL),1)
GENCODE += -gencode=arch=compute_$(LAST_ARCH),code=compute_$(LAST_ARCH)
FATBIN  := --compress-mode=size
endif
# NVFLAGS (the knob) and NVEXTRA decide the code: NVCODE is every flag that
# does, the instances' and the kernel variants' alike (geninst writes it
# into embedded.c as fa_code_flags[], kernels/embedded.h; sweep/variant.c
# compiles with it; `fasweep version --json` prints it). NVALL adds what
# only the build's own units take (targets, include paths, warnings).
NVFLAGS ?= -O3 -std=c++17 -lineinfo
NVCODE  := $(NVFLAGS) --expt-relaxed-constexpr $(NVEXTRA)
NVALL   := $(NVFLAGS) $(GENCODE) -I. -Ikernels -Xcompiler -Wall,-Wextra,-Werror,-fPIC \
           $(FATBIN) --expt-relaxed-constexpr $(NVEXTRA)

# ---- host modules (C11, no CUDA) -----------------------------------------
# Every .c of a folder is part of its layer (add a file, not a Makefile line).
# sweep/'s pure modules (no CUDA) go to the host library the unit tests link.
SWEEP_PURE := sweep/stats.c sweep/task.c sweep/dispatch.c sweep/intervals.c sweep/visible.c
HOST_SRC := $(wildcard kernels/*.c kernels/*/*.c store/*.c grid/*.c seeds/*.c report/*.c export/*.c) $(SWEEP_PURE)
HOST_OBJ := $(HOST_SRC:%.c=$(BUILD)/obj/%.o)
HOST_LIB := $(BUILD)/libfasweep_host.a

# ---- GPU-side driver (C11 calling the CUDA runtime) and the command line ----
DRIVER_SRC := $(filter-out $(SWEEP_PURE),$(wildcard sweep/*.c)) $(filter-out cli/main.c,$(wildcard cli/*.c))
DRIVER_OBJ := $(DRIVER_SRC:%.c=$(BUILD)/obj/%.o)

# ---- kernels: instances generated from the spaces -------------------------
GEN       := $(KBUILD)/gen
GEN_CU    := $(foreach i,$(shell seq 0 $$(($(SHARDS)-1))),$(GEN)/inst_$(i).cu)
# A family whose code runs on one architecture (fa_family.arch: wgmma on
# sm_90a) has its own shards, compiled for that target alone with the
# -gencode form (nvcc 13.0's -arch=sm_90a also runs a plain sm_90 pass that
# rejects wgmma); none when ARCHS does not hold 90 (geninst then leaves the
# family's instances out of the registry). One kernel library either way.
ifneq ($(filter 90,$(ARCHS)),)
ARCH_SHARDS := $(SHARDS_90A)
GEN_CU_90A := $(foreach i,$(shell seq 0 $$(($(SHARDS_90A)-1))),$(GEN)/inst_sm90a_$(i).cu)
else
ARCH_SHARDS := 0
GEN_CU_90A :=
endif
GENCODE_90A := -gencode=arch=compute_90a,code=sm_90a
# The shared kernels (every family's instances use them) and each family's
# folder kernels/<family>/: its template (*.cuh), traits (*.h) and
# description (*.c, a host module). Adding a family adds a folder, no line.
KSRC      := kernels/reference.cu kernels/check.cu kernels/registry.cu kernels/spin.cu \
             kernels/inject.cu
# In the order make starts them under -j, the longest first as far as known: the shared
# kernels (reference.cu is one of the longest units, and last it was the build's tail),
# then the instance shards (sweep/NOTES-engine.md, fourteenth session).
KOBJ      := $(KSRC:kernels/%.cu=$(KBUILD)/kobj/%.o) $(GEN_CU:$(GEN)/%.cu=$(KBUILD)/kobj/%.o) \
             $(GEN_CU_90A:$(GEN)/%.cu=$(KBUILD)/kobj/%.o)
FAMILY_HDR := $(wildcard kernels/*/*.cuh kernels/*/*.h)
KERNEL_HDR := kernels/fa_config.h kernels/fa_launch.h kernels/fa_device.cuh $(FAMILY_HDR)
# The element rule of the reference and the checks (no instance includes it).
CHECK_HDR := kernels/fa_elem.cuh

.PHONY: all sweep test test-gpu check unit cli fuzz format format-check includes unused dist \
        clean deps deps-test vendor-deps list-instances test-slurm tuners test-triton FORCE
.DEFAULT_GOAL := all

all: $(BUILD)/fasweep

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(HOST_LIB): $(HOST_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The instance generator: the planner, built without CUDA, run over SPACES.
GENINST_SRC := scripts/geninst.c kernels/family.c $(wildcard kernels/*/*.c) grid/space.c \
               grid/plan.c grid/problem_json.c store/text.c store/mode.c store/json.c
GENINST_HDR := $(KERNEL_HDR) kernels/family.h grid/space.h grid/plan.h grid/problem_json.h \
               store/text.h store/mode.h store/json.h
# One object per source, so that `make -j` compiles them at once: the main job builds
# geninst first, alone, before anything else can start (1.4 s of one core as one command).
GENINST_OBJ := $(GENINST_SRC:%.c=$(KBUILD)/geninst-obj/%.o)
$(KBUILD)/geninst-obj/%.o: %.c $(GENINST_HDR)
	@mkdir -p $(dir $@)
	$(CC) -O1 -std=c11 -D_GNU_SOURCE $(WARN) -I. $(PKG_CFLAGS) -c $< -o $@
$(KBUILD)/geninst: $(GENINST_OBJ)
	$(CC) $^ -o $@ $(PKG_LIBS)

# geninst rewrites a file only when its text changes, so editing a space
# recompiles only the shards whose instance lists moved.
# The flags as a file rewritten only when they change: a new NVFLAGS or
# NVEXTRA on the command line reruns geninst (build id, fa_code_flags).
$(GEN)/nvflags: FORCE
	@mkdir -p $(GEN)
	@echo '$(NVALL) | $(NVCODE)' | cmp -s - $@ || echo '$(NVALL) | $(NVCODE)' > $@
# The list of spaces the same way: a build folder built for fewer spaces (the
# main job builds only its own: scripts/run_default_sweep.sh) is regenerated
# when a later make names more, never left holding the shorter list.
$(GEN)/spaces: FORCE
	@mkdir -p $(GEN)
	@echo '$(SPACES)' | cmp -s - $@ || echo '$(SPACES)' > $@
FORCE:
$(GEN)/.stamp: $(KBUILD)/geninst $(SPACES) $(KERNEL_HDR) kernels/registry.cu Makefile $(GEN)/nvflags \
               $(GEN)/spaces
	@mkdir -p $(GEN)
	$(KBUILD)/geninst --out $(GEN) --shards $(SHARDS) --arch-shards $(ARCH_SHARDS) --archs "$(ARCHS)" \
	  --hash-files "$(KERNEL_HDR) kernels/registry.cu" --flags "$(NVALL)" --code-flags "$(NVCODE)" \
	  --embed "kernels/fa_config.h kernels/fa_launch.h kernels/fa_device.cuh $(wildcard kernels/*/*.h kernels/*/*.cuh)" $(SPACES)
	@touch $@
$(GEN_CU) $(GEN_CU_90A) $(GEN)/registry_table.inc $(GEN)/build_id.h $(GEN)/embedded.c: $(GEN)/.stamp ;

# The headers a kernel variant is compiled against (sweep/variant.h).
$(BUILD)/obj/gen/embedded.o: $(GEN)/embedded.c kernels/embedded.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The sm_90a shards: NVFLAGS with the ARCHS gencodes swapped for sm_90a's
# (the shorter stem wins over inst_%.o below).
$(KBUILD)/kobj/inst_sm90a_%.o: $(GEN)/inst_sm90a_%.cu $(KERNEL_HDR)
	@mkdir -p $(dir $@)
	$(NVCC) $(filter-out $(GENCODE),$(NVALL)) $(GENCODE_90A) -I$(GEN) -c $< -o $@

$(KBUILD)/kobj/inst_%.o: $(GEN)/inst_%.cu $(KERNEL_HDR)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVALL) -I$(GEN) -c $< -o $@

$(KBUILD)/kobj/registry.o: kernels/registry.cu $(GEN)/registry_table.inc $(GEN)/build_id.h $(KERNEL_HDR)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVALL) -I$(GEN) -c $< -o $@

$(KBUILD)/kobj/%.o: kernels/%.cu $(KERNEL_HDR) $(CHECK_HDR)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVALL) -c $< -o $@

$(KLIB): $(KOBJ)
	@mkdir -p $(dir $@)
	$(NVCC) -shared -cudart shared $(GENCODE) $^ -o $@

# The kernel library first: make -j then starts its long nvcc units before the host's short
# C objects, which fill the gaps.
$(BUILD)/fasweep: $(KLIB) $(BUILD)/obj/cli/main.o $(DRIVER_OBJ) $(BUILD)/obj/gen/embedded.o $(HOST_LIB)
	$(CC) $(LDFLAGS) $(RPATH) $(filter-out $(KLIB),$^) -o $@ $(PKG_LIBS) $(CUDA_LIBS)

list-instances: $(GEN)/.stamp
	@cat $(GEN)/instances.txt

# ---- tests -------------------------------------------------------------------
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.c $(HOST_LIB) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(HOST_LIB) -o $@ $(PKG_LIBS) $(CMOCKA_LIBS) -lm

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; \
	  CMOCKA_MESSAGE_OUTPUT=stdout FASWEEP_TEST_TMP=$(abspath $(BUILD))/tmp $$t; done

cli: $(BUILD)/fasweep
	FASWEEP=$(abspath $(BUILD)/fasweep) FASWEEP_ASAN=$(SAN) bash tests/cli/run.sh

# Every CPU test against a small build (the CI space), then the same under
# AddressSanitizer + UBSan, then a short fuzz run of the space parser.
check: format-check includes unused unit cli
	$(MAKE) BUILD=$(BUILD)/asan KBUILD=$(KBUILD) SAN=1 SPACES="$(SPACES)" unit cli
	$(MAKE) BUILD=$(BUILD) fuzz

test: deps-test
	$(MAKE) BUILD=build/ci SPACES=spaces/ci.json check tuners test-slurm evolve test-triton
	@echo "test: done; the binary tested is build/ci/fasweep (the CI space's instances only; make builds build/fasweep)"

# The tuner exports read by Kernel Tuner 1.5.0 itself (simulation mode, no
# GPU) and the T4 export checked against its schema, in a venv of pinned
# packages from PyPI. Exit 77 (no venv or no PyPI) is a skip, never a pass.
tuners: $(BUILD)/fasweep
	@bash tests/tuners/run.sh $(abspath $(BUILD)/fasweep) || { rc=$$?; \
	  if [ $$rc -eq 77 ]; then echo "tuners: SKIPPED (reason above)"; else exit $$rc; fi; }

# scripts/evolve_code.py and its mutators against a stand-in fasweep (no
# GPU, no build; stdlib Python 3.11). Exit 77 (no Python 3.11) is a skip.
evolve:
	@bash tests/evolve/run.sh || { rc=$$?; \
	  if [ $$rc -eq 77 ]; then echo "evolve: SKIPPED (reason above)"; else exit $$rc; fi; }

# scripts/triton_attention.py (the benchmark's Triton column) under Triton's
# interpreter on the CPU (seconds). PYTHON=... picks a Python with triton and
# torch; exit 77 (they do not import) is a skip.
test-triton:
	@bash tests/triton/run.sh || { rc=$$?; \
	  if [ $$rc -eq 77 ]; then echo "test-triton: SKIPPED (reason above)"; else exit $$rc; fi; }

# `fasweep plan --shard` as Slurm job arrays and an srun under a real
# one-node Slurm that tests/slurm/run.sh starts and stops (it installs
# slurm-wlm and munge when missing; needs root). Its exit status 77 means
# this machine cannot host the cluster: reported as a skip, not a pass.
test-slurm: $(BUILD)/fasweep
	@bash tests/slurm/run.sh $(abspath $(BUILD)/fasweep) || { rc=$$?; \
	  if [ $$rc -eq 77 ]; then echo "test-slurm: SKIPPED (reason above)"; else exit $$rc; fi; }

# The fuzzers (libFuzzer, ASan + UBSan): the space parser, and the record
# path (an import file's lines, the JSON codec, the merge and rank orders)
# seeded with the CLI fixtures. FUZZ_TIME seconds each: short in make test,
# `make fuzz FUZZ_TIME=600` for a longer run.
FUZZ_TIME ?= 20
FUZZ_CC := clang -g -O1 -std=c11 -D_GNU_SOURCE -I. $(PKG_CFLAGS) -fsanitize=fuzzer,address,undefined
RECORD_SRC := store/record.c store/store.c store/store_io.c store/text.c store/mode.c store/file.c
FAMILY_SRC := kernels/family.c $(wildcard kernels/*/*.c)
$(BUILD)/fuzz_space: tests/fuzz/fuzz_space.c grid/space.c grid/space.h store/text.c store/text.h store/mode.c store/mode.h $(FAMILY_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) tests/fuzz/fuzz_space.c grid/space.c store/text.c store/mode.c $(FAMILY_SRC) -o $@ $(PKG_LIBS)
# record.c checks a kernel record's config by its family's rules: the family table links in.
$(BUILD)/fuzz_record: tests/fuzz/fuzz_record.c $(RECORD_SRC) $(wildcard store/*.h) $(FAMILY_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) tests/fuzz/fuzz_record.c $(RECORD_SRC) $(FAMILY_SRC) -o $@ $(PKG_LIBS)
fuzz: $(BUILD)/fuzz_space $(BUILD)/fuzz_record
	@mkdir -p $(BUILD)/fuzz-corpus $(BUILD)/fuzz-record-corpus
	$(BUILD)/fuzz_space -max_total_time=$(FUZZ_TIME) -timeout=5 -rss_limit_mb=2048 \
	  $(BUILD)/fuzz-corpus tests/fuzz/corpus
	$(BUILD)/fuzz_record -max_total_time=$(FUZZ_TIME) -timeout=5 -rss_limit_mb=2048 \
	  -max_len=4096 $(BUILD)/fuzz-record-corpus tests/cli/fixtures

test-gpu: $(BUILD)/fasweep $(BUILD)/fa_check
	FASWEEP=$(abspath $(BUILD)/fasweep) FA_CHECK=$(abspath $(BUILD)/fa_check) \
	  bash tests/gpu/run.sh

$(BUILD)/fa_check $(BUILD)/fa_bench: $(BUILD)/%: tests/gpu/%.c $(HOST_LIB) $(KLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $(RPATH) $(filter-out $(KLIB),$^) -o $@ $(PKG_LIBS) $(CUDA_LIBS)

# ---- running -------------------------------------------------------------------
# The script looks for the GPU first (none: it says so and exits 1, which
# make reports as `Error 1` and exits 2), then runs deps.sh, then builds, so
# a machine without a GPU installs nothing.
sweep:
	@DEPS="$(DEPS)" CUDA="$(CUDA)" bash scripts/run_default_sweep.sh "$(BUILD)"

# With DEPS set these only check the bundle and the tools (never apt-get).
deps:
	@DEPS="$(DEPS)" CUDA="$(CUDA)" bash scripts/deps.sh build
deps-test:
	@DEPS="$(DEPS)" CUDA="$(CUDA)" bash scripts/deps.sh test

# Headers and libraries of lmdb, cjson and cmocka in one folder, to carry to
# a GPU node that has no package registry: make DEPS=.deps there.
vendor-deps:
	bash scripts/vendor_deps.sh .deps

dist: $(BUILD)/fasweep $(BUILD)/fa_check $(BUILD)/fa_bench
	bash scripts/dist.sh $(BUILD) dist/fasweep $(KLIB)

# No module includes a header that depends on it back; stages only look back.
includes:
	python3 scripts/check_includes.py .

# No global function of the host code that nothing calls (nm on the
# build's objects; scripts/check_unused.py).
unused: $(BUILD)/fasweep $(HOST_OBJ)
	python3 scripts/check_unused.py --build $(BUILD)

# The sources: git's tracked files in a git checkout of this folder, else
# (a tarball, a copy without .git) every *.c *.h *.cu *.cuh outside the
# build, dist and hidden folders.
FORMAT_FILES = $$(if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$$(pwd -P)" ]; then \
  git ls-files '*.c' '*.h' '*.cu' '*.cuh'; else \
  find . \( -path ./build -o -path ./dist -o -name '.?*' \) -prune -o -type f \
  \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sort; fi)
format:
	@files="$(FORMAT_FILES)"; \
	[ -n "$$files" ] || { echo "format: no *.c *.h *.cu *.cuh files found under $$(pwd)" >&2; exit 1; }; \
	clang-format -i $$files
# The tree is formatted with clang-format $(FORMAT_MAJOR) (Debian bookworm). Other
# majors differ in small details, so there the check only reports. It fails
# when there is no clang-format or no file to check: "clean" means checked.
FORMAT_MAJOR = 14
format-check:
	@command -v clang-format >/dev/null || \
	  { echo "format-check: no clang-format on PATH; install clang-format $(FORMAT_MAJOR) (make deps-test does)" >&2; exit 1; }; \
	files="$(FORMAT_FILES)"; \
	[ -n "$$files" ] || { echo "format-check: no *.c *.h *.cu *.cuh files found under $$(pwd): nothing checked" >&2; exit 1; }; \
	n=$$(echo $$files | wc -w); \
	v=$$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p'); \
	if [ "$$v" = "$(FORMAT_MAJOR)" ]; then \
	  clang-format --dry-run --Werror $$files && echo "format-check: clean ($$n files)"; \
	else \
	  echo "format-check: clang-format $$v, tree uses $(FORMAT_MAJOR): reporting only ($$n files)" >&2; \
	  clang-format --dry-run $$files 2>&1 | head -20; \
	fi

clean:
	rm -rf build dist

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
