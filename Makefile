# Goblin's two set-up commands (see README.md):
#   make run   build a release goblind and start it in the foreground
#   make test  build and run the whole test suite, plain and under
#              AddressSanitizer + UndefinedBehaviorSanitizer
# and the longer runs (README.md, "More commands"):
#   make load  the full load and fault runs (bench/faults.sh: 1,000
#              connections; LOAD_ARGS="--seconds 60" to change)
#   make bench run every benchmark and write build-benchmarks/report/
#              REPORT.md (bench/report.sh; BENCH_ARGS=--quick for a smoke
#              run; see docs/BENCHMARKS.md)
#   make valgrind  the unit and fuzz-replay suites under Valgrind memcheck
#   make fuzz      every libFuzzer target for FUZZ_SECONDS each (clang,
#                  ASan + UBSan); fails on any crash
# All install the Debian packages they need first (as root, or via sudo).

RELEASE_DIR := build-release
TEST_DIR    := build
ASAN_DIR    := build-asan

BUILD_PKGS := meson ninja-build gcc g++ pkg-config python3 \
              liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
TEST_PKGS  := $(BUILD_PKGS) libcmocka-dev redis-server redis-tools redis-sentinel \
              python3-redis libhiredis-dev libssl-dev openssl valgrind \
              abigail-tools
# bench: Google Benchmark for the microbenchmarks, gnuplot for the CDFs.
BENCH_PKGS := $(TEST_PKGS) libbenchmark-dev gnuplot-nox
BENCH_ARGS ?=
VALGRIND_PKGS := $(TEST_PKGS)
FUZZ_PKGS  := $(BUILD_PKGS) clang libclang-rt-14-dev

FUZZ_SECONDS ?= 180

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# $(call ensure_pkgs,LIST): apt-get install whatever of LIST is missing.
define ensure_pkgs
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

.PHONY: run test load bench valgrind fuzz

# BUILD_PKGS has Lua, so `make run` requires scripting: a goblind without
# it would only say so at the first EVAL.
run:
	$(call ensure_pkgs,$(BUILD_PKGS))
	@[ -d $(RELEASE_DIR) ] || meson setup $(RELEASE_DIR) --buildtype=release -Dtests=false -Dscripting=enabled
	meson configure $(RELEASE_DIR) -Dscripting=enabled
	meson compile -C $(RELEASE_DIR)
	exec $(RELEASE_DIR)/server/goblind --ring /dev/shm/goblin.ring 1m

test:
	$(call ensure_pkgs,$(TEST_PKGS))
	@[ -d $(TEST_DIR) ] || meson setup $(TEST_DIR)
	meson compile -C $(TEST_DIR)
	meson test -C $(TEST_DIR) --verbose --print-errorlogs
	@[ -d $(ASAN_DIR) ] || meson setup $(ASAN_DIR) -Db_sanitize=address,undefined -Db_lundef=false -Dbench=disabled
	meson compile -C $(ASAN_DIR)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  meson test -C $(ASAN_DIR) --verbose --print-errorlogs
	@# The release build is what `make run` starts: it must keep compiling
	@# (-O3 finds warnings the test builds do not).
	@[ -d $(RELEASE_DIR) ] || meson setup $(RELEASE_DIR) --buildtype=release -Dtests=false -Dscripting=enabled
	meson compile -C $(RELEASE_DIR)

load:
	$(call ensure_pkgs,$(TEST_PKGS))
	bench/faults.sh $(LOAD_ARGS)

bench:
	$(call ensure_pkgs,$(BENCH_PKGS))
	bench/report.sh $(BENCH_ARGS)

valgrind:
	$(call ensure_pkgs,$(VALGRIND_PKGS))
	@[ -d $(TEST_DIR) ] || meson setup $(TEST_DIR)
	@# A build dir made before valgrind was installed lacks the setup.
	meson setup --reconfigure $(TEST_DIR) >/dev/null
	meson compile -C $(TEST_DIR)
	meson test -C $(TEST_DIR) --setup valgrind --suite unit --suite fuzz \
	  --print-errorlogs

fuzz:
	$(call ensure_pkgs,$(FUZZ_PKGS))
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
