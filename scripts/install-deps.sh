#!/usr/bin/env bash
# Installs the Debian packages NetActivity needs to build, run and test: only those missing,
# and without touching apt at all when nothing is. Works as root, and through sudo otherwise.
#
# usage: scripts/install-deps.sh [bench | deb | test-deb | gnome]
#
#   (no mode)  what `make run`, `make install` and `make test` need (`make deps`)
#   bench      also what the benchmark needs (`make bench-deps`): dbus-test-tool (Debian's
#              dbus-tests), the floor it compares netactivityd with. The C compiler for the C
#              floor is in the default set: the tests build that floor too. (valgrind and perf
#              are for profiling by hand; see docs/benchmarks.md.)
#   deb        also what `make deb` needs: dpkg-shlibdeps (dpkg-dev); dpkg-deb is dpkg's own.
#   test-deb   also what `make test-deb`'s check needs besides: lintian (about 120 packages,
#              which is why `make deb` alone does not install it).
#   gnome      also what the GNOME Shell extension's test needs (`make test-gnome`): the shell
#              itself, gjs, PyGObject with GdkPixbuf for the driver and its screenshots, and
#              glib-compile-resources for the stand-ins of the gjs check.
#
# Tested by Tests/RepositoryTests/InstallDepsTests.swift with a fake apt-get, apt-cache and sudo.
set -euo pipefail

# need CHECK PACKAGE...: when CHECK fails, the first PACKAGE the archive has is installed.
# Debian 12 splits dbus into dbus-daemon and dbus-bin; older releases ship both in "dbus".
missing=()
need() {
    local check=$1
    shift
    if ! bash -c "$check" >/dev/null 2>&1; then
        missing+=("$*")
    fi
}
need 'command -v pkg-config' pkg-config
need 'pkg-config --exists dbus-1' libdbus-1-dev
need 'command -v dbus-daemon' dbus-daemon dbus
need 'command -v dbus-send && command -v dbus-monitor' dbus-bin dbus
need 'command -v busctl' systemd
need 'command -v gdbus' libglib2.0-bin
need '/usr/bin/python3 -c "import gi"' python3-gi
need '/usr/bin/python3 -c "import gi; gi.require_version(\"Unity\", \"7.0\")"' gir1.2-unity-7.0
need 'command -v man' man-db
need 'command -v strip' binutils
# The bridge's PackageKit tests: the real packagekitd (dummy backend) driven by pkcon, and
# python-dbusmock's polkitd, run with Debian's own /usr/bin/python3 (so checked by that path).
need 'command -v pkcon' packagekit-tools
need '/usr/bin/python3 -c "import dbusmock"' python3-dbusmock
# The shell integration's tests: real shells in tmux, curl against python's http.server, strace
# to count the shell's forks.
need 'command -v zsh' zsh
need 'command -v fish' fish
need 'command -v tmux' tmux
need 'command -v curl' curl
need 'command -v python3' python3
need 'command -v strace' strace
# The service's tests build the benchmark's C floor to check it sends what the service sends.
need 'command -v cc' gcc
# The bridge's traffic tests: two network namespaces joined by a veth pair (ip), entered with
# nsenter, and a transfer by another user (setpriv).
need 'command -v ip' iproute2
need 'command -v nsenter && command -v setpriv' util-linux
# The browser extension's tests: the real browsers, headless, driven with nothing but the
# standard library (Chromium's command line, Firefox's Marionette).
need 'command -v chromium' chromium
need 'command -v firefox-esr' firefox-esr
case "${1:-}" in
"") ;;
bench)
    need 'command -v dbus-test-tool' dbus-tests
    ;;
deb)
    need 'command -v dpkg-shlibdeps' dpkg-dev
    ;;
test-deb)
    need 'command -v lintian' lintian
    need 'command -v dpkg-shlibdeps' dpkg-dev
    ;;
gnome)
    need 'command -v gnome-shell' gnome-shell
    need 'command -v gjs' gjs
    need 'command -v dbus-run-session' dbus-daemon dbus
    need 'command -v glib-compile-resources' libglib2.0-dev-bin
    need '/usr/bin/python3 -c "import gi"' python3-gi
    need '/usr/bin/python3 -c "import gi; gi.require_version(\"GdkPixbuf\", \"2.0\")"' gir1.2-gdkpixbuf-2.0
    ;;
*)
    echo "usage: $0 [bench | deb | test-deb | gnome]" >&2
    exit 2
    ;;
esac

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: everything needed is installed"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "deps: missing, and no apt-get to install them: ${missing[*]}" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "deps: missing ${missing[*]}; run as root (or install sudo) to install them" >&2
        exit 1
    fi
    sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
echo "deps: apt-get update"
"${sudo[@]}" apt-get update -q

# Reads apt-cache's whole answer before matching: piping it into `grep -q` would let grep exit
# at the first match, kill apt-cache with SIGPIPE, and pipefail would turn the match into a failure.
available() {
    local policy
    policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
    [[ $policy =~ Candidate:\ [^\(] ]]
}
packages=()
for alternatives in "${missing[@]}"; do
    chosen=""
    for package in $alternatives; do
        if available "$package"; then
            chosen=$package
            break
        fi
    done
    if [ -z "$chosen" ]; then
        echo "deps: no package in the archive provides what needs one of: $alternatives" >&2
        exit 1
    fi
    if [[ " ${packages[*]} " != *" $chosen "* ]]; then
        packages+=("$chosen")
    fi
done

echo "deps: installing ${packages[*]}"
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
