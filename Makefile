# NetActivity: build, test, run and install netactivityd and netactivity.
#
#   make run                     install what is missing, build release, run on the session bus
#   make test                    install what is missing, build and run every test suite
#   make install [PREFIX=...]    binary, D-Bus activation file, systemd user unit, interface XML
#   make uninstall [PREFIX=...]
#   make install-autostart       start `netactivity tray` at login (~/.config/autostart)
#
# Variables: PREFIX (default ~/.local), DESTDIR (staged installs), SWIFT, SWIFT_BUILD_FLAGS,
# SWIFT_TEST_FLAGS, ARGS (extra netactivityd flags for `make run`), NETACTIVITYD (see install).

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

SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
# One test at a time. Bus tests block their thread while they wait for a child or a bus, and
# Swift Testing runs tests on the cooperative pool, which has one thread per core: run in
# parallel on 2 cores, two waiting tests stall every async test (timeouts, timing checks).
SWIFT_TEST_FLAGS ?= --no-parallel
ARGS ?=
BUS_NAME := io.github.netactivity.NetActivity1
RELEASE_BINARY := .build/release/netactivityd
RELEASE_CLI := .build/release/netactivity

# The binary `install` copies. Empty: build release and install that. Set it to install an
# existing binary without building; a test running under `swift test` must do so, because
# SwiftPM holds the .build lock for the whole test run and a nested `swift build` would wait
# for it forever.
NETACTIVITYD ?=
# Likewise for the command line; by default the `netactivity` beside $(NETACTIVITYD).
NETACTIVITY ?= $(if $(NETACTIVITYD),$(dir $(NETACTIVITYD))netactivity,$(RELEASE_CLI))

.PHONY: all deps build release run test test-debug install uninstall install-autostart uninstall-autostart clean

all: build

## Installs the missing Debian packages (nothing, and no apt-get update, when none is missing).
deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_BUILD_FLAGS)

## Runs netactivityd in the foreground; starts a private bus when there is no session bus.
run: deps release
	scripts/run-service.sh $(RELEASE_BINARY) $(ARGS)

# MARK: - Tests

## Every test pass, in order. Later passes (sanitizers, ...) are added to this list, each as
## its own target below with its own --scratch-path so the builds do not overwrite each other.
TEST_PASSES := test-debug

test: $(TEST_PASSES)

test-debug: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) $(SWIFT_TEST_FLAGS)

# MARK: - Installation

install: $(if $(NETACTIVITYD),,release)
	install -d "$(DESTDIR)$(bindir)" "$(DESTDIR)$(dbusservicedir)" \
		"$(DESTDIR)$(dbusinterfacedir)" "$(DESTDIR)$(systemduserunitdir)" "$(DESTDIR)$(datadir)/netactivity"
	install -m 0755 "$(or $(NETACTIVITYD),$(RELEASE_BINARY))" "$(DESTDIR)$(bindir)/netactivityd"
	if [ -x "$(NETACTIVITY)" ]; then install -m 0755 "$(NETACTIVITY)" "$(DESTDIR)$(bindir)/netactivity"; fi
	sed -e 's|@bindir@|$(bindir)|g' -e 's|@datadir@|$(datadir)|g' \
		dbus/$(BUS_NAME).service.in > "$(DESTDIR)$(dbusservicedir)/$(BUS_NAME).service"
	sed -e 's|@bindir@|$(bindir)|g' -e 's|@datadir@|$(datadir)|g' \
		dbus/netactivityd.service.in > "$(DESTDIR)$(systemduserunitdir)/netactivityd.service"
	install -m 0644 dbus/$(BUS_NAME).xml "$(DESTDIR)$(dbusinterfacedir)/$(BUS_NAME).xml"
	sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-tray.desktop.in \
		> "$(DESTDIR)$(datadir)/netactivity/netactivity-tray.desktop"
	@echo "installed netactivityd in $(DESTDIR)$(PREFIX); D-Bus activation starts it on first use"

uninstall:
	rm -f "$(DESTDIR)$(bindir)/netactivityd" "$(DESTDIR)$(bindir)/netactivity" \
		"$(DESTDIR)$(dbusservicedir)/$(BUS_NAME).service" \
		"$(DESTDIR)$(systemduserunitdir)/netactivityd.service" \
		"$(DESTDIR)$(dbusinterfacedir)/$(BUS_NAME).xml" \
		"$(DESTDIR)$(datadir)/netactivity/netactivity-tray.desktop"
	rmdir "$(DESTDIR)$(datadir)/netactivity" 2>/dev/null || true

## The tray's XDG autostart entry for the current user; run after `make install` (same PREFIX).
install-autostart:
	install -d "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart"
	sed -e 's|@bindir@|$(bindir)|g' dbus/netactivity-tray.desktop.in \
		> "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart/netactivity-tray.desktop"
	@echo "netactivity tray starts at your next login; start it now with: $(bindir)/netactivity tray &"

uninstall-autostart:
	rm -f "$${XDG_CONFIG_HOME:-$$HOME/.config}/autostart/netactivity-tray.desktop"

clean:
	rm -rf .build
