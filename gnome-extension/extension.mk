# The GNOME Shell extension (gnome-extension/README.md), included by the top Makefile.
#
#   make gnome-extension            both builds and their zips for extensions.gnome.org, in
#                                   $(GNOME_EXTENSION_BUILD)
#   make install-gnome-extension    the build for this machine's GNOME Shell into
#                                   $(DESTDIR)$(datadir)/gnome-shell/extensions/UUID (`make install` does it)
#   make uninstall-gnome-extension
#   make test-gnome                 the extension in a real headless GNOME Shell, and the GNOME 45+
#                                   build under gjs, against the debug netactivityd (part of make test)
#
# Variables: GNOME_SHELL_FORMAT (shell43 or shell45; by default the one this system's GNOME
# Shell loads: the installed gnome-shell's version, else the archive's candidate, so a .deb
# built without the shell installed suits its release; shell43 when neither is known).

GNOME_EXTENSION_UUID := netactivity@netactivity.github.io
GNOME_EXTENSION_BUILD := .build/gnome-extension
gnomeextensiondir := $(datadir)/gnome-shell/extensions/$(GNOME_EXTENSION_UUID)
GNOME_SHELL_FORMAT ?= $(shell v=$$( { gnome-shell --version 2>/dev/null || \
	apt-cache policy gnome-shell 2>/dev/null | sed -n 's/^ *Candidate: \([0-9]\)/GNOME Shell \1/p'; } | \
	sed -n 's/^GNOME Shell \([0-9]*\).*/\1/p' | sed -n 1p); [ -n "$$v" ] && [ "$$v" -ge 45 ] && echo shell45 || echo shell43)

.PHONY: gnome-extension gnome-deps install-gnome-extension uninstall-gnome-extension test-gnome

gnome-extension:
	python3 gnome-extension/build.py $(GNOME_EXTENSION_BUILD)
	@echo "built $(GNOME_EXTENSION_BUILD)/$(GNOME_EXTENSION_UUID).shell43.zip (GNOME 43)" \
		"and $(GNOME_EXTENSION_BUILD)/$(GNOME_EXTENSION_UUID).shell45.zip (GNOME 45 and later)"

## What test-gnome needs beyond `deps`: gnome-shell, gjs, PyGObject, glib-compile-resources.
gnome-deps:
	@scripts/install-deps.sh gnome

install-gnome-extension: gnome-extension
	install -d "$(DESTDIR)$(gnomeextensiondir)"
	install -m 0644 $(addprefix $(GNOME_EXTENSION_BUILD)/$(GNOME_SHELL_FORMAT)/$(GNOME_EXTENSION_UUID)/,\
		extension.js metadata.json stylesheet.css) "$(DESTDIR)$(gnomeextensiondir)/"

uninstall-gnome-extension:
	rm -f "$(DESTDIR)$(gnomeextensiondir)/extension.js" "$(DESTDIR)$(gnomeextensiondir)/metadata.json" \
		"$(DESTDIR)$(gnomeextensiondir)/stylesheet.css"
	rmdir "$(DESTDIR)$(gnomeextensiondir)" 2>/dev/null || true

## Runs the shell test twice: on the extension built from source, then on a copy staged by
## install-gnome-extension (what `make install` and the .deb put in place). About half a minute.
test-gnome: deps gnome-deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product netactivityd
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) --product netactivity
	bin=$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path); \
	gnome-extension/tests/test-esm.sh "$$bin/netactivityd"; \
	SCREENSHOTS=$(GNOME_EXTENSION_BUILD)/screenshots gnome-extension/tests/test-shell.sh "$$bin/netactivityd"; \
	stage=$(GNOME_EXTENSION_BUILD)/stage; rm -rf "$$stage"; \
	$(MAKE) --no-print-directory install-gnome-extension DESTDIR="$$PWD/$$stage" PREFIX=/usr GNOME_SHELL_FORMAT=shell43 >/dev/null; \
	gnome-extension/tests/test-shell.sh "$$bin/netactivityd" "$$stage/usr/share/gnome-shell/extensions/$(GNOME_EXTENSION_UUID)"
