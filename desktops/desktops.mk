# The desktop matrix (docs/development.md), included by the top Makefile: the GNOME Shell
# extension and the tray in real newer desktops, each in a Debian root made by desktops/root.sh.
#
#   make test-desktops            every desktop below (part of make test)
#   make desktop-roots            make (or refresh) the roots alone
#   make test-desktop-gnome-SUITE one GNOME Shell (SUITE: trixie 48, forky 50, sid 51)
#   make test-desktop-plasma-SUITE one Plasma (trixie 6.3, forky 6.7): the tray, then the
#                                 bridge's plasma-jobs source, each in a session of its own
#   make test-desktop-deb         the .deb installed, run and purged on Debian 13
#
# The roots are cached under /var/cache/netactivity (NETACTIVITY_ROOTS); the first run makes
# them. The programs run inside are the -static-stdlib release build the .deb ships, which
# needs nothing of the toolchain inside a root.

DESKTOP_SUITES := trixie forky sid
GNOME_SUITES := trixie forky sid
PLASMA_SUITES := trixie forky
DESKTOP_SCREENSHOTS := .build/desktops

.PHONY: test-desktops desktop-roots test-desktop-deb \
	$(addprefix test-desktop-gnome-,$(GNOME_SUITES)) $(addprefix test-desktop-plasma-,$(PLASMA_SUITES))

desktop-roots:
	desktops/root.sh make $(DESKTOP_SUITES)

test-desktops: desktop-roots release-static
	SECONDS=0; \
	$(MAKE) --no-print-directory $(addprefix test-desktop-gnome-,$(GNOME_SUITES)) \
		$(addprefix test-desktop-plasma-,$(PLASMA_SUITES)) test-desktop-deb; \
	echo "test-desktops: every desktop passed in $$SECONDS s"

# GNOME Shell in a root: the extension's checks (gnome-extension/tests/shell_test.py); its
# screenshots and logs go to $(DESKTOP_SCREENSHOTS)/gnome-SUITE.
$(addprefix test-desktop-gnome-,$(GNOME_SUITES)): test-desktop-gnome-%: desktop-roots release-static
	NETACTIVITY_DESKTOPS=$(DESKTOP_SCREENSHOTS) gnome-extension/tests/test-shell-root.sh $* $(RELEASE_STATIC_SCRATCH)/release

# Plasma in a root: the tray's checks, then the job list's (desktops/plasma/); each prints its time.
$(addprefix test-desktop-plasma-,$(PLASMA_SUITES)): test-desktop-plasma-%: desktop-roots release-static
	desktops/plasma/test-tray.sh $* $(RELEASE_STATIC_SCRATCH)/release

# The .deb on Debian 13.
test-desktop-deb: desktop-roots deb
	desktops/test-deb.sh trixie $$(scripts/build-deb.sh --name $(RELEASE_STATIC_SCRATCH)/release)
