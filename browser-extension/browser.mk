# The browser extension and its native messaging host (docs/browsers.md), included by the top
# Makefile.
#
#   make browser-extension        netactivity-VERSION.zip (Chrome Web Store) and .xpi
#                                 (addons.mozilla.org) in $(BROWSER_EXTENSION_BUILD)
#   make install-browser-host     the host's wrapper in $(PREFIX)/lib/netactivity and, without
#                                 DESTDIR, its manifest where this user's browsers look (`make
#                                 install` does it); the .deb installs system-wide manifests instead
#   make uninstall-browser-host
#
# Browsers start the host at the manifest's `path` with arguments of their own, so `path` is a
# wrapper that runs `netactivity browser-host`. `netactivity browser-host --install-manifests`
# does the per-user part by hand.

BROWSER_EXTENSION_BUILD := .build/browser-extension
BROWSER_HOST_NAME := io.github.netactivity.browser
browserhostdir := $(PREFIX)/lib/netactivity
BROWSER_HOST_WRAPPER := $(browserhostdir)/netactivity-browser-host
# Whose browsers `make install` tells: the user running it. Empty: none.
BROWSER_MANIFEST_HOME ?= $(if $(DESTDIR),,$(HOME))

# DIRECTORY:FLAVOR for each browser of that user; Brave's and Vivaldi's only where present.
browser_manifest_dirs = $(BROWSER_MANIFEST_HOME)/.mozilla/native-messaging-hosts:firefox \
	$(BROWSER_MANIFEST_HOME)/.config/chromium/NativeMessagingHosts:chromium \
	$(BROWSER_MANIFEST_HOME)/.config/google-chrome/NativeMessagingHosts:chromium \
	$(if $(wildcard $(BROWSER_MANIFEST_HOME)/.config/BraveSoftware/Brave-Browser),$(BROWSER_MANIFEST_HOME)/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts:chromium) \
	$(if $(wildcard $(BROWSER_MANIFEST_HOME)/.config/vivaldi),$(BROWSER_MANIFEST_HOME)/.config/vivaldi/NativeMessagingHosts:chromium)

.PHONY: browser-extension install-browser-host uninstall-browser-host

browser-extension:
	python3 browser-extension/pack.py $(BROWSER_EXTENSION_BUILD)

install-browser-host:
	install -d "$(DESTDIR)$(browserhostdir)"
	sed -e 's|@bindir@|$(bindir)|g' browser-extension/host/netactivity-browser-host.in > "$(DESTDIR)$(BROWSER_HOST_WRAPPER)"
	chmod 0755 "$(DESTDIR)$(BROWSER_HOST_WRAPPER)"
	$(if $(BROWSER_MANIFEST_HOME),for entry in $(browser_manifest_dirs); do \
		install -d "$${entry%:*}" && \
		sed -e 's|@path@|$(BROWSER_HOST_WRAPPER)|g' "browser-extension/host/$${entry##*:}.json.in" \
			> "$${entry%:*}/$(BROWSER_HOST_NAME).json"; \
	done)

uninstall-browser-host:
	rm -f "$(DESTDIR)$(BROWSER_HOST_WRAPPER)"
	rmdir "$(DESTDIR)$(browserhostdir)" 2>/dev/null || true
	$(if $(BROWSER_MANIFEST_HOME),for entry in $(browser_manifest_dirs); do rm -f "$${entry%:*}/$(BROWSER_HOST_NAME).json"; done)
