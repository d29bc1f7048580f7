# Thin wrapper over CMake: `make run` (Linpack sized for this machine), `make test`, `make bench`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
CTEST_ARGS ?=

.PHONY: all deps deps-build build run test test-plain test-asan bench clean

all: build

deps:
	@scripts/install-deps.sh test

deps-build:
	@scripts/install-deps.sh build

build: deps-build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Linpack sized for this machine: on the GPU when one is present, else on the CPU.
run: build
	@scripts/run-hpl.sh $(BUILD)/bin/tessera

# All tests: the normal build, then the same tests built with AddressSanitizer + UBSan.
test: test-plain test-asan

test-plain: deps build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-asan: deps
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DTESSERA_CUDA=OFF \
	  -DTESSERA_SANITIZE=address,undefined $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	@cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Benchmarks of this machine (GEMM engines side by side, Linpack); JSON under bench/out/.
bench: build
	@bench/run.sh $(BUILD)/bin/tessera bench/out

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
