# warden's front door: the README's commands.
#
#   make demo    install what is missing, build, run the scripted agent demo
#   make test    install what is missing, build, run every test
#   make check   test + the asan-ubsan build's tests + the format check (CI)
#   make bench   the benchmark harness (release build)
#   make install the release binary, man page and bash completion
#                (PREFIX=/usr/local, DESTDIR= for packaging)
#
# Packages come from Debian 12; when not root, apt-get runs through sudo.

SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# What warden builds against, what its tests and demo run, and the tools CI
# uses (clang for the fuzzers and the format check).
PKGS := build-essential cmake pkg-config git python3 \
	libseccomp-dev libfuse3-dev fuse3 libcurl4-openssl-dev libcjson-dev \
	libsqlite3-dev sqlite3 libcmocka-dev \
	clang libclang-rt-14-dev clang-format bubblewrap iproute2

PREFIX ?= /usr/local

.PHONY: all deps build release demo install test test-asan fuzz format format-check check bench clean test-agents

all: build

deps:
	@missing=$$(for p in $(PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j$(JOBS)

# The release build: optimised, with the hardening flags of the preset.
release: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j$(JOBS) --target warden

# warden refuses to run from a place the agent (or another user) could
# write: install it where only root can (the tree it was built in is the
# user's own). cmake --install (the rules in CMakeLists.txt) puts the
# release binary in $(PREFIX)/bin, the man page warden(1) in
# $(PREFIX)/share/man/man1 and the bash completion in
# $(PREFIX)/share/bash-completion/completions, all under $(DESTDIR).
install: release
	$(SUDO) env DESTDIR="$(DESTDIR)" cmake --install build/release --prefix "$(PREFIX)"

demo: build
	$(SUDO) ./examples/demo.sh build/debug/supervisor/warden

# ctest runs the unit and integration tests, one program at a time (they
# start many sandboxed processes; races and deadlines are measured alone);
# the sandbox tests need root
# (or user namespaces): through sudo when not root.
test: build
	cd build/debug && $(SUDO) ctest --output-on-failure

test-asan: deps
	cmake --preset asan-ubsan >/dev/null
	cmake --build --preset asan-ubsan -j$(JOBS)
	cd build/asan-ubsan && $(SUDO) env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure

FUZZ_SECONDS ?= 60
fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j$(JOBS) --target fuzz_config fuzz_classify fuzz_verdict fuzz_argv fuzz_dns
	@for t in build/fuzz/fuzz/fuzz_*; do \
		[ -x "$$t" ] || continue; \
		name=$$(basename $$t); seeds=fuzz/corpus/$${name#fuzz_}; \
		echo "== $$name ($(FUZZ_SECONDS) s, seeds in $$seeds)"; \
		mkdir -p build/fuzz/corpus/$$name; \
		$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			build/fuzz/corpus/$$name $$seeds > build/fuzz/$$name.log 2>&1 \
			|| { tail -40 build/fuzz/$$name.log; exit 1; }; \
		tail -4 build/fuzz/$$name.log; \
	done

SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(SOURCES)

format-check:
	@clang-format --dry-run --Werror $(SOURCES) && echo "format: ok"

check: test test-asan fuzz format-check

bench:
	cmake --preset release >/dev/null
	cmake --build --preset release -j$(JOBS)
	./bench/run --warden build/release/supervisor/warden $(BENCH_ARGS)

clean:
	rm -rf build

# The real Claude Code and Codex CLIs (npm, cached in build/agents) in short
# scripted sessions under warden, offline against tests/agents/
# fake_anthropic.py and fake_responses.py. Exit 77: skipped (no npm, or no
# network for the first install); one skipped agent does not skip the other.
test-agents: build
	@rc=0; bash tests/agents/run_claude.sh build/debug/supervisor/warden || rc=$$?; \
	rc2=0; bash tests/agents/run_codex.sh build/debug/supervisor/warden || rc2=$$?; \
	for r in $$rc $$rc2; do [ $$r -eq 0 ] || [ $$r -eq 77 ] || exit $$r; done; \
	[ $$rc -eq 77 ] && [ $$rc2 -eq 77 ] && exit 77; exit 0
