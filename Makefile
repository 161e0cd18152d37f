# NetActivity: build, test, run and install netactivityd and netactivity.
#
#   make run                     install what is missing, build the service and run it on the session
#                                bus, then build the command line while it runs
#   make test                    install what is missing, build and run every test suite
#   make check                   the unit tier alone (pure tests, in parallel): under a minute
#   make install [PREFIX=...]    binaries, D-Bus activation file, systemd user unit, interface XML,
#                                man pages, shell completions, the tray's autostart entry, the
#                                browsers' native messaging host and this user's manifests for it
#   make uninstall [PREFIX=...]
#   make deb                     netactivity_VERSION_ARCH.deb, statically linked (debian/);
#                                make test-deb checks it (part of make test)
#   make bench                   netactivityd against libdbus floors (docs/benchmarks.md)
#   make soak [SOAK_MINUTES=60]  the whole stack running and churning for an hour, its parts' memory,
#                                descriptors, threads and CPU sampled each minute (make test: 2 min)
#   make interface               regenerates dbus/$(BUS_NAME).xml and gnome-extension/src/interface.js
#                                from the contract's descriptors
#   make install-autostart       start `netactivity tray` at login (~/.config/autostart)
#   make browser-extension       the browser extension's .zip and .xpi for the stores (docs/browsers.md)
#   make fuzz [FUZZ_SECONDS=60]  every libFuzzer target (Fuzz/) that long on its corpus, two at a time;
#                                make fuzz-merge keeps what they found in Fuzz/corpus (docs/development.md)
#
# Variables: PREFIX (default ~/.local), DESTDIR (staged installs), SWIFT, SWIFT_BUILD_FLAGS,
# SWIFT_TEST_FLAGS, ARGS (extra netactivityd flags for `make run`), NETACTIVITYD (see install),
# FUZZ_TARGETS, FUZZ_SECONDS, FUZZ_JOBS, FUZZ_CONFIGURATION, FUZZ_SCRATCH (see Fuzzing).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

PREFIX ?= $(HOME)/.local
DESTDIR ?=
bindir := $(PREFIX)/bin
datadir := $(PREFIX)/share
dbusservicedir := $(datadir)/dbus-1/services
dbusinterfacedir := $(datadir)/dbus-1/interfaces
# systemd --user reads units from $(datadir)/systemd/user for ~/.local ($XDG_DATA_HOME),
# /usr/local and /usr alike.
systemduserunitdir := $(datadir)/systemd/user
mandir := $(datadir)/man
bashcompletiondir := $(datadir)/bash-completion/completions
zshcompletiondir := $(datadir)/zsh/site-functions
fishcompletiondir := $(datadir)/fish/vendor_completions.d
# The tray's own icons, in the theme every icon theme falls back to.
trayicondir := $(datadir)/icons/hicolor/scalable/status
TRAY_ICONS := $(notdir $(wildcard data/icons/hicolor/scalable/status/*.svg))

SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
# One test at a time. Bus tests block their thread while they wait for a child or a bus, and
# Swift Testing runs tests on the cooperative pool, which has one thread per core: run in
# parallel on 2 cores, two waiting tests stall every async test (timeouts, timing checks).
SWIFT_TEST_FLAGS ?= --no-parallel
ARGS ?=
BUS_NAME := io.github.netactivity.NetActivity1
# Both programs link the Swift runtime statically: netactivityd idles in less memory
# (docs/benchmarks.md), and neither needs the toolchain at run time, so an installed CLI (and the
# tray it autostarts) keeps working when the toolchain moves or is upgraded. One scratch path:
# the second product reuses the first one's modules.
RELEASE_STATIC_SCRATCH := .build/static
RELEASE_BINARY := $(RELEASE_STATIC_SCRATCH)/release/netactivityd
RELEASE_CLI := $(RELEASE_STATIC_SCRATCH)/release/netactivity
RELEASE_BUILD = $(SWIFT) build -c release -Xswiftc -static-stdlib $(SWIFT_BUILD_FLAGS) --scratch-path $(RELEASE_STATIC_SCRATCH)
# What `make install` and the .deb do to both binaries: symbols and notes off, as Debian ships them.
STRIP := strip --strip-unneeded --remove-section=.comment --remove-section=.note

# The binary `install` copies. Empty: build release and install that. Set it to install an
# existing binary without building; a test running under `swift test` must do so, because
# SwiftPM holds the .build lock for the whole test run and a nested `swift build` would wait
# for it forever.
NETACTIVITYD ?=
# Likewise for the command line; by default the `netactivity` beside $(NETACTIVITYD).
NETACTIVITY ?= $(if $(NETACTIVITYD),$(dir $(NETACTIVITYD))netactivity,$(RELEASE_CLI))

.PHONY: all deps build release run test check test-debug soak install uninstall install-autostart uninstall-autostart clean bench bench-deps \
	deb deb-deps test-deb-deps release-static test-deb interface test-scratch-property

all: build

## Installs the missing Debian packages (nothing, and no apt-get update, when none is missing).
deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

## The service first, so that `make run` can start it before the command line is built.
release: deps
	$(RELEASE_BUILD) --product netactivityd
	$(RELEASE_BUILD) --product netactivity

## Runs netactivityd in the foreground; starts a private bus when there is no session bus.
## Builds the service alone first; the command line is built once the service owns its name,
## in the background (scripts/run-service.sh --then), so the first `make run` answers sooner.
run: deps
	$(RELEASE_BUILD) --product netactivityd
	scripts/run-service.sh --then '$(RELEASE_BUILD) --product netactivity' --then-built $(RELEASE_CLI) \
		$(RELEASE_BINARY) $(ARGS)

## The interface XML and the GNOME Shell extension's names as NetActivityContract's descriptors
## declare them; RepositoryTests fails, with the difference, while a checked-in file is not what
## this writes.
interface: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product netactivity-interface
	bin=$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path); \
	"$$bin/netactivity-interface" > dbus/$(BUS_NAME).xml && \
	"$$bin/netactivity-interface" --gjs > gnome-extension/src/interface.js

# MARK: - Tests

## Every test pass, in order. A pass is a build (its own --scratch-path, so the builds do not
## overwrite each other) and a run; a new pass adds its name here and its two halves below.
TEST_PASSES := test-debug test-gnome test-asan test-tsan test-fuzz test-deb test-desktops test-scratch-property

## `make test` runs the passes in three lanes at once (make -j3): one builds, in order, what the
## passes need; one runs the passes, in order, each as soon as its build is there; the third
## runs the suites that spend their time waiting on transfers paced in time. A test run mostly
## waits (for buses, children, paced transfers) while a build keeps both cores busy, so the
## lanes overlap; no two builds ever go at once. Each lane step's output is printed when it
## ends. `make test-asan` and the others run one pass alone, its build first.
##
## The lanes go on after a failure until their running steps end, so the failing step's output is
## seldom the last one printed; on a failure the whole output is kept in .build/make-test.log and
## its failing lines are printed again at the end, where a CI log's tail shows them.
TEST_LOG := .build/make-test.log
## What marks a failing line: Swift Testing's ✘ (with the ↳ lines that detail it), XCTest's and
## the compiler's `: error:`, a failing make step, the desktop tests' FAILED, a crash, a
## sanitizer's report.
TEST_FAILURE_LINES := ^✘|: error: |^error: |^make\[[0-9]+\]: \*\*\* \[|FAILED|Fatal error|^ERROR: .*Sanitizer
test: deps
	@SECONDS=0; mkdir -p $(dir $(TEST_LOG)); \
	if $(MAKE) --no-print-directory -j3 --output-sync=target $(addprefix lane-,$(TEST_PASSES)) lane-test-waiting 2>&1 | tee $(TEST_LOG); then \
		echo "make test: every pass passed in $$SECONDS s"; \
	else \
		echo "make test: failed after $$SECONDS s; the failing lines (all of it in $(TEST_LOG)):"; \
		awk 'n == 80 { exit } /$(TEST_FAILURE_LINES)/ { print substr($$0, 1, 400); n++; detail = /^✘/; next } \
			detail && /^↳/ { print substr($$0, 1, 400); n++; next } { detail = 0 }' $(TEST_LOG); \
		exit 1; \
	fi

# The build lane, one after another.
lane-build-debug: deps
	$(DEBUG_BUILD)
lane-build-asan: | lane-build-debug
	$(ASAN_BUILD)
lane-build-tsan: | lane-build-asan
	$(TSAN_BUILD)
lane-build-fuzz: | lane-build-tsan
	$(MAKE) --no-print-directory fuzz-build FUZZ_CONFIGURATION=debug
lane-build-release: | lane-build-fuzz
	$(MAKE) --no-print-directory release-static
lane-build-roots: | lane-build-release
	$(MAKE) --no-print-directory desktop-roots
# A build and a run of its own copy, short, so the build lane takes it last.
lane-test-scratch-property: | lane-build-roots
	$(MAKE) --no-print-directory test-scratch-property

# The run lane, one after another, each after its build.
lane-test-debug: lane-build-debug
	$(UNIT_RUN)
	$(DEBUG_RUN)
lane-test-gnome: | lane-test-debug
	$(MAKE) --no-print-directory test-gnome
lane-test-asan: lane-build-asan | lane-test-gnome
	$(ASAN_RUN)
lane-test-tsan: lane-build-tsan | lane-test-asan
	$(TSAN_RUN)
lane-test-deb: lane-build-release | lane-test-tsan
	$(MAKE) --no-print-directory test-deb
lane-test-desktops: lane-build-release lane-build-roots | lane-test-deb
	$(MAKE) --no-print-directory test-desktops

# The waiting lane, then the fuzzers.
lane-test-waiting: lane-build-debug
	$(WAITING_RUN)
lane-test-fuzz: lane-build-fuzz | lane-test-waiting
	$(MAKE) --no-print-directory test-fuzz

.PHONY: $(addprefix lane-,$(TEST_PASSES)) lane-test-waiting lane-build-debug lane-build-asan lane-build-tsan lane-build-fuzz lane-build-release lane-build-roots

DEBUG_BUILD = $(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
UNIT_RUN = NETACTIVITY_TESTS=unit $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --parallel
## The suites that spend their time waiting on transfers paced in time: the traffic source's
## (2-second samples, 5 seconds of quiet before an end), the real browsers' downloads, and the
## whole stack's faults and 2-minute soak.
WAITING_SUITES := '^NetActivityBridgeTests\.Traffic|^NetActivityBrowserTests\.RealBrowserTests/|^NetActivityStackTests\.'
DEBUG_RUN = $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) $(SWIFT_TEST_FLAGS) --skip $(WAITING_SUITES)
## Run from the test bundle itself, as `swift test` runs it: two `swift test`s on one scratch
## path take turns (SwiftPM locks it for the whole run), which would put the lanes back in line.
WAITING_RUN = .build/debug/NetActivityPackageTests.xctest \
	$(SWIFT_TEST_FLAGS) --filter $(WAITING_SUITES) --testing-library swift-testing

## docs/architecture.md's scratch property: a copy of the repository gains an activity property
## with the three edits the doc lists, builds, and `status --json` must print it.
test-scratch-property: deps
	scripts/scratch-property.sh

## The unit tier: no bus, no child process, nothing but the code and files of its own, so its
## tests run in parallel; the system tier's suites (`@Suite(.system, ...)`) are skipped.
check: deps
	$(DEBUG_BUILD)
	$(UNIT_RUN)

## The unit tier first, then everything one test at a time (the unit tier's few seconds again).
test-debug: check
	$(DEBUG_RUN)
	$(WAITING_RUN)

## The suites the sanitizer passes run: the libdbus layer, the service (the real netactivityd,
## built with the same sanitizer), the fault tests, and the client library's threads.
SANITIZED_SUITES := '^(DBusTests|NetActivityServiceTests|NetActivityFaultTests)\.|\.ClientConcurrencyTests/'

# LeakSanitizer is off in the test process: Swift stores enum payload pointers with tag bits,
# which it cannot follow, so values held for the whole run read as leaks. The fault tests turn
# it back on in the netactivityd they start and fail if it reports anything when it exits.
# A malloc too large to satisfy returns NULL under both sanitizers, as glibc's does, so a test
# can check that it becomes an error (the sanitizers' default is to abort).
ASAN_BUILD = $(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan $(SWIFT_BUILD_FLAGS)
ASAN_RUN = NETACTIVITY_SANITIZER=address ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 $(SWIFT) test --skip-build --sanitize=address \
	--scratch-path .build/asan $(SWIFT_BUILD_FLAGS) $(SWIFT_TEST_FLAGS) --filter $(SANITIZED_SUITES)
TSAN_BUILD = $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan $(SWIFT_BUILD_FLAGS)
TSAN_RUN = NETACTIVITY_SANITIZER=thread TSAN_OPTIONS=allocator_may_return_null=1 $(SWIFT) test --skip-build --sanitize=thread \
	--scratch-path .build/tsan $(SWIFT_BUILD_FLAGS) $(SWIFT_TEST_FLAGS) --filter $(SANITIZED_SUITES)

test-asan: deps
	$(ASAN_BUILD)
	$(ASAN_RUN)

test-tsan: deps
	$(TSAN_BUILD)
	$(TSAN_RUN)

# MARK: - Fuzzing

## A libFuzzer program per parser of outside bytes (Fuzz/NAME, FuzzTargets' `FuzzTarget.all`),
## built with AddressSanitizer in a scratch path of their own: under --sanitize=fuzzer SwiftPM
## builds every executable as a library, which the others' top-level main.swift cannot be, so
## only these products are built. NETACTIVITY_FUZZ makes them targets (Package.swift).
FUZZ_TARGETS := sock-diag interface-counters json native-messaging desktop-entry app-unit procfs launcher-update \
	packagekit shell-helper dbus-message unit-file plasma-jobs
FUZZ_SECONDS ?= 60
## Targets run at once: one a core.
FUZZ_JOBS ?= 2
## Optimised: eight times the executions of a debug build, which builds in half the time and is
## what the CI pass runs. -enable-testing lets FuzzTargets reach the parsers that are internal to
## their modules (`@testable import`) in either.
## The sanitizers are one -sanitize=fuzzer,address: swiftc keeps only the last -sanitize flag, and
## SwiftPM passes one per --sanitize in an order that changes from run to run, so with two the
## code lost either its coverage or its AddressSanitizer, and was rebuilt whenever the order
## changed. --sanitize=fuzzer alone still tells SwiftPM that libFuzzer has the programs' main.
FUZZ_SCRATCH ?= .build/fuzz
FUZZ_CONFIGURATION ?= release
FUZZ_BUILD = NETACTIVITY_FUZZ=1 $(SWIFT) build -c $(FUZZ_CONFIGURATION) --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
	-Xswiftc -enable-testing --scratch-path $(FUZZ_SCRATCH) $(SWIFT_BUILD_FLAGS)

.PHONY: fuzz fuzz-build fuzz-merge test-fuzz

fuzz-build: deps
	for target in $(FUZZ_TARGETS); do $(FUZZ_BUILD) --product fuzz-$$target; done

## New finds go to .build/fuzz/found, crashes to .build/fuzz/crashes; Fuzz/corpus is only read.
fuzz: fuzz-build
	FUZZ_DIR=$(FUZZ_SCRATCH) FUZZ_BIN=$(FUZZ_SCRATCH)/$(FUZZ_CONFIGURATION) scripts/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

## What the runs found that adds coverage, minimised into Fuzz/corpus (-merge=1).
fuzz-merge:
	FUZZ_DIR=$(FUZZ_SCRATCH) FUZZ_BIN=$(FUZZ_SCRATCH)/$(FUZZ_CONFIGURATION) scripts/fuzz.sh merge $(FUZZ_TARGETS)

## The CI pass: every target 15 s on its corpus, in the debug build, whose shorter build pays
## for more than its fewer executions in so short a run.
test-fuzz:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=15 FUZZ_CONFIGURATION=debug

## The whole stack's soak (`StackSoakTests`, docs/development.md): SOAK_MINUTES long, 60 by
## default. `make test` runs the same test for 2 minutes, in its debug pass.
SOAK_MINUTES ?= 60
soak: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	SOAK_MINUTES=$(SOAK_MINUTES) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --no-parallel --filter StackSoakTests

# MARK: - Benchmarks

## The -static-stdlib build the benchmark measures beside the default one, for memory.
BENCH_STATIC_SCRATCH := .build/bench-static
## Extra netactivity-bench flags, e.g. BENCH_ARGS="--rounds 9 --only toggle-pipe".
BENCH_ARGS ?=
## The last commit of interface version 2: its netactivityd, built from the repository's history
## into $(VERSION2_SOURCE), is the reference the update rows measure version 3 against. Without
## the history (a tarball), those rows are left out.
VERSION2_COMMIT := 5318145
VERSION2_SOURCE := .build/version2-source
VERSION2_BINARY := $(VERSION2_SOURCE)/.build/release/netactivityd

## What the benchmark needs beyond `deps`: dbus-test-tool (dbus-tests), when missing.
bench-deps:
	@scripts/install-deps.sh bench

## Builds release netactivityd (default and -static-stdlib), netactivity, the driver and the
## C floor, prints what c-floor's signals cost to make (no bus), then runs the driver on private
## dbus-daemons: about 7 minutes.
bench: deps bench-deps
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --product netactivityd
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --product netactivity-bench
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --product netactivity
	$(SWIFT) build -c release -Xswiftc -static-stdlib $(SWIFT_BUILD_FLAGS) --scratch-path $(BENCH_STATIC_SCRATCH) \
		--product netactivityd
	$(SWIFT) build -c release -Xswiftc -static-stdlib $(SWIFT_BUILD_FLAGS) --scratch-path $(BENCH_STATIC_SCRATCH) \
		--product netactivity
	if [ ! -x "$(VERSION2_BINARY)" ] && git rev-parse --verify -q "$(VERSION2_COMMIT)^{commit}" >/dev/null; then \
		rm -rf "$(VERSION2_SOURCE)" && mkdir -p "$(VERSION2_SOURCE)" && \
		git archive "$(VERSION2_COMMIT)" | tar -x -C "$(VERSION2_SOURCE)" && \
		$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --package-path "$(VERSION2_SOURCE)" --product netactivityd; \
	fi
	mkdir -p .build/bench
	cc -O2 -Wall -o .build/bench/c-floor Benchmarks/floor/c-floor.c $$(pkg-config --cflags --libs dbus-1)
	.build/bench/c-floor --time-signals 50000 # what making each signal costs, without a bus (docs/benchmarks.md)
	@$(SWIFT) --version 2>&1 | sed -n 1p # not head: under pipefail its early exit would fail the recipe
	bin=$$($(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --show-bin-path); \
	static=$$($(SWIFT) build -c release $(SWIFT_BUILD_FLAGS) --scratch-path $(BENCH_STATIC_SCRATCH) --show-bin-path); \
	"$$bin/netactivity-bench" --service "$$static/netactivityd" --compare-service "$$bin/netactivityd" \
		--cli "$$static/netactivity" --floor .build/bench/c-floor \
		$$([ -x "$(VERSION2_BINARY)" ] && echo --version2-service "$(VERSION2_BINARY)") $(BENCH_ARGS)

# MARK: - Installation

install: $(if $(NETACTIVITYD),,release)
	install -d "$(DESTDIR)$(bindir)" "$(DESTDIR)$(dbusservicedir)" \
		"$(DESTDIR)$(dbusinterfacedir)" "$(DESTDIR)$(systemduserunitdir)" "$(DESTDIR)$(datadir)/netactivity"
	install -d "$(DESTDIR)$(mandir)/man1" "$(DESTDIR)$(mandir)/man8" "$(DESTDIR)$(bashcompletiondir)" \
		"$(DESTDIR)$(zshcompletiondir)" "$(DESTDIR)$(fishcompletiondir)" "$(DESTDIR)$(trayicondir)"
	install -m 0755 "$(or $(NETACTIVITYD),$(RELEASE_BINARY))" "$(DESTDIR)$(bindir)/netactivityd"
	if [ -x "$(NETACTIVITY)" ]; then install -m 0755 "$(NETACTIVITY)" "$(DESTDIR)$(bindir)/netactivity"; fi
	$(STRIP) "$(DESTDIR)$(bindir)/netactivityd"
	if [ -e "$(DESTDIR)$(bindir)/netactivity" ]; then $(STRIP) "$(DESTDIR)$(bindir)/netactivity"; fi
	sed -e 's|@bindir@|$(bindir)|g' -e 's|@datadir@|$(datadir)|g' \
		dbus/$(BUS_NAME).service.in > "$(DESTDIR)$(dbusservicedir)/$(BUS_NAME).service"
	sed -e 's|@bindir@|$(bindir)|g' -e 's|@datadir@|$(datadir)|g' \
		dbus/netactivityd.service.in > "$(DESTDIR)$(systemduserunitdir)/netactivityd.service"
	install -m 0644 dbus/$(BUS_NAME).xml "$(DESTDIR)$(dbusinterfacedir)/$(BUS_NAME).xml"
	sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-tray.desktop.in \
		> "$(DESTDIR)$(datadir)/netactivity/netactivity-tray.desktop"
	sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-bridge.desktop.in \
		> "$(DESTDIR)$(datadir)/netactivity/netactivity-bridge.desktop"
	sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-bridge.service.in \
		> "$(DESTDIR)$(systemduserunitdir)/netactivity-bridge.service"
	install -m 0644 man/netactivity.1 "$(DESTDIR)$(mandir)/man1/netactivity.1"
	install -m 0644 man/netactivityd.8 "$(DESTDIR)$(mandir)/man8/netactivityd.8"
	install -m 0644 completions/netactivity.bash "$(DESTDIR)$(bashcompletiondir)/netactivity"
	install -m 0644 completions/_netactivity "$(DESTDIR)$(zshcompletiondir)/_netactivity"
	install -m 0644 completions/netactivity.fish "$(DESTDIR)$(fishcompletiondir)/netactivity.fish"
	install -m 0644 $(addprefix data/icons/hicolor/scalable/status/,$(TRAY_ICONS)) "$(DESTDIR)$(trayicondir)"
	$(update-icon-cache)
	$(MAKE) --no-print-directory install-gnome-extension
	$(MAKE) --no-print-directory install-browser-host
	@echo "installed netactivityd in $(DESTDIR)$(PREFIX); D-Bus activation starts it on first use"

uninstall:
	rm -f "$(DESTDIR)$(bindir)/netactivityd" "$(DESTDIR)$(bindir)/netactivity" \
		"$(DESTDIR)$(dbusservicedir)/$(BUS_NAME).service" \
		"$(DESTDIR)$(systemduserunitdir)/netactivityd.service" \
		"$(DESTDIR)$(dbusinterfacedir)/$(BUS_NAME).xml" \
		"$(DESTDIR)$(datadir)/netactivity/netactivity-tray.desktop" \
		"$(DESTDIR)$(datadir)/netactivity/netactivity-bridge.desktop" \
		"$(DESTDIR)$(systemduserunitdir)/netactivity-bridge.service" \
		"$(DESTDIR)$(mandir)/man1/netactivity.1" "$(DESTDIR)$(mandir)/man8/netactivityd.8" \
		"$(DESTDIR)$(bashcompletiondir)/netactivity" "$(DESTDIR)$(zshcompletiondir)/_netactivity" \
		"$(DESTDIR)$(fishcompletiondir)/netactivity.fish" \
		$(addprefix "$(DESTDIR)$(trayicondir)/,$(addsuffix ",$(TRAY_ICONS)))
	$(update-icon-cache)
	rmdir "$(DESTDIR)$(datadir)/netactivity" 2>/dev/null || true
	$(MAKE) --no-print-directory uninstall-gnome-extension
	$(MAKE) --no-print-directory uninstall-browser-host

# GTK reads a hicolor folder through its icon-theme.cache, where one exists, and would miss the
# tray's icons until it is made again. Staged installs (DESTDIR) leave it to the package's
# trigger.
define update-icon-cache
if [ -z "$(DESTDIR)" ] && [ -e "$(datadir)/icons/hicolor/icon-theme.cache" ]; then \
	gtk-update-icon-cache --quiet --force "$(datadir)/icons/hicolor" || true; fi
endef

## The tray's and the bridge's XDG autostart entries for the current user; run after
## `make install` (same PREFIX).
install-autostart:
	install -d "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart"
	for entry in tray bridge; do \
		sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-$$entry.desktop.in \
			> "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart/netactivity-$$entry.desktop"; \
	done
	@echo "netactivity tray and bridge start at your next login; start them now with: $(bindir)/netactivity tray & $(bindir)/netactivity bridge &"

uninstall-autostart:
	rm -f "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart/netactivity-tray.desktop" \
		"$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart/netactivity-bridge.desktop"

# MARK: - System bus

## `netactivityd --system` for system daemons (docs/system-bus.md): binary, bus policy, system
## activation file, sandboxed system unit, interface XML; and the system-side bridge
## (`netactivity --system bridge`, the system services' transfers): its binary and sandboxed
## unit, started at boot by a multi-user.target.wants link beside it. PREFIX defaults to /usr here, not
## ~/.local: the system bus reads policies only from /usr/share/dbus-1/system.d and
## /etc/dbus-1/system.d (set SYSTEM_POLICY_DIR=/etc/dbus-1/system.d for another PREFIX).
## DESTDIR and NETACTIVITYD work as for `install`.
SYSTEM_PREFIX := $(if $(filter command line environment override,$(origin PREFIX)),$(PREFIX),/usr)
system_bindir := $(SYSTEM_PREFIX)/bin
system_datadir := $(SYSTEM_PREFIX)/share
SYSTEM_POLICY_DIR ?= $(system_datadir)/dbus-1/system.d
dbussystemservicedir := $(system_datadir)/dbus-1/system-services
systemdsystemunitdir := $(SYSTEM_PREFIX)/lib/systemd/system
# systemd-sysusers reads /usr/lib/sysusers.d and /etc/sysusers.d.
sysusersdir := $(SYSTEM_PREFIX)/lib/sysusers.d
SYSTEM_UNIT := netactivityd-system.service
SYSTEM_BRIDGE_UNIT := netactivity-bridge-system.service

.PHONY: install-system uninstall-system

install-system: $(if $(NETACTIVITYD),,release)
	install -d "$(DESTDIR)$(system_bindir)" "$(DESTDIR)$(SYSTEM_POLICY_DIR)" "$(DESTDIR)$(dbussystemservicedir)" \
		"$(DESTDIR)$(systemdsystemunitdir)" "$(DESTDIR)$(system_datadir)/dbus-1/interfaces" \
		"$(DESTDIR)$(systemdsystemunitdir)/multi-user.target.wants" "$(DESTDIR)$(sysusersdir)"
	install -m 0755 "$(or $(NETACTIVITYD),$(RELEASE_BINARY))" "$(DESTDIR)$(system_bindir)/netactivityd"
	install -m 0755 "$(NETACTIVITY)" "$(DESTDIR)$(system_bindir)/netactivity"
	$(STRIP) "$(DESTDIR)$(system_bindir)/netactivityd" "$(DESTDIR)$(system_bindir)/netactivity"
	install -m 0644 dbus/$(BUS_NAME).conf "$(DESTDIR)$(SYSTEM_POLICY_DIR)/$(BUS_NAME).conf"
	sed -e 's|@bindir@|$(system_bindir)|g' -e 's|@datadir@|$(system_datadir)|g' \
		dbus/$(BUS_NAME).system-service.in > "$(DESTDIR)$(dbussystemservicedir)/$(BUS_NAME).service"
	sed -e 's|@bindir@|$(system_bindir)|g' -e 's|@datadir@|$(system_datadir)|g' \
		dbus/$(SYSTEM_UNIT).in > "$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_UNIT)"
	sed -e 's|@bindir@|$(system_bindir)|g' -e 's|@datadir@|$(system_datadir)|g' \
		dbus/$(SYSTEM_BRIDGE_UNIT).in > "$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_BRIDGE_UNIT)"
	ln -sf ../$(SYSTEM_BRIDGE_UNIT) "$(DESTDIR)$(systemdsystemunitdir)/multi-user.target.wants/$(SYSTEM_BRIDGE_UNIT)"
	chmod 0644 "$(DESTDIR)$(dbussystemservicedir)/$(BUS_NAME).service" "$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_UNIT)" \
		"$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_BRIDGE_UNIT)"
	install -m 0644 dbus/$(BUS_NAME).xml "$(DESTDIR)$(system_datadir)/dbus-1/interfaces/$(BUS_NAME).xml"
	install -m 0644 dbus/netactivity.sysusers "$(DESTDIR)$(sysusersdir)/netactivity.conf"
	@echo "installed netactivityd for the system bus in $(DESTDIR)$(SYSTEM_PREFIX); as root, run" \
		"\`systemd-sysusers\` (the bridge's user), \`systemctl daemon-reload\` and \`systemctl reload dbus\`:" \
		"D-Bus activation starts it on first use;" \
		"\`systemctl start $(SYSTEM_BRIDGE_UNIT)\` starts the system-side bridge now (it starts at every boot)"

## Leaves the binary and interface XML while a session install (`make install`) at the same
## PREFIX still uses them.
uninstall-system:
	rm -f "$(DESTDIR)$(SYSTEM_POLICY_DIR)/$(BUS_NAME).conf" \
		"$(DESTDIR)$(dbussystemservicedir)/$(BUS_NAME).service" \
		"$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_UNIT)" \
		"$(DESTDIR)$(systemdsystemunitdir)/$(SYSTEM_BRIDGE_UNIT)" \
		"$(DESTDIR)$(systemdsystemunitdir)/multi-user.target.wants/$(SYSTEM_BRIDGE_UNIT)" \
		"$(DESTDIR)$(sysusersdir)/netactivity.conf"
	rmdir "$(DESTDIR)$(systemdsystemunitdir)/multi-user.target.wants" 2>/dev/null || true
	if [ ! -e "$(DESTDIR)$(system_datadir)/dbus-1/services/$(BUS_NAME).service" ]; then \
		rm -f "$(DESTDIR)$(system_bindir)/netactivityd" "$(DESTDIR)$(system_bindir)/netactivity" \
			"$(DESTDIR)$(system_datadir)/dbus-1/interfaces/$(BUS_NAME).xml"; \
	fi

# MARK: - Debian package

## What `make deb` needs beyond `deps`: dpkg-shlibdeps (dpkg-dev); dpkg-deb comes with dpkg.
deb-deps:
	@scripts/install-deps.sh deb

## What `make test-deb` needs beyond that: lintian, which only the check uses.
test-deb-deps:
	@scripts/install-deps.sh test-deb

## Both programs with the Swift runtime linked statically, in one scratch path (as `release`).
release-static: deps deb-deps
	$(RELEASE_BUILD) --product netactivityd
	$(RELEASE_BUILD) --product netactivity

## netactivity_VERSION_ARCH.deb in this directory, staged by `make install` under .build/deb.
deb: release-static
	scripts/build-deb.sh $(RELEASE_STATIC_SCRATCH)/release .

## Builds the package and checks it: dpkg-deb --info/--contents, lintian, and the unpacked
## netactivityd --version. A make target, not a Swift test: `swift build` inside `swift test`
## would wait for SwiftPM's lock forever (see NETACTIVITYD above).
test-deb: test-deb-deps deb
	scripts/check-deb.sh $$(scripts/build-deb.sh --name $(RELEASE_STATIC_SCRATCH)/release)

include gnome-extension/extension.mk
include desktops/desktops.mk
include browser-extension/browser.mk

clean:
	rm -rf .build
