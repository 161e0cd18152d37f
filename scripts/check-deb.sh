#!/usr/bin/env bash
# Checks a package `make deb` built: its control fields, that every file is in its place, the
# licence in its copyright file, lintian (no errors), and that it installs into a scratch root
# (dpkg --root, with its own empty package database), where netactivityd and netactivity run
# and print the package's version and `man` finds the pages, and that removing and purging it
# leave nothing behind.
# Used by `make test-deb`, part of `make test`.
#
# usage: scripts/check-deb.sh netactivity_VERSION_ARCH.deb
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 PACKAGE.deb" >&2
    exit 2
fi
deb=$1
failures=0
fail() {
    echo "check-deb: $*" >&2
    failures=$((failures + 1))
}

# MARK: - Control fields
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = netactivity ] || fail "Package is '$(field Package)', not netactivity"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is '$(field Architecture)'"
version=$(field Version)
[[ "$(basename "$deb")" == "netactivity_${version}_$(field Architecture).deb" ]] \
    || fail "the file name $(basename "$deb") does not carry version $version"
depends=$(field Depends)
for library in libdbus-1-3 libc6; do
    [[ $depends == *"$library"* ]] || fail "Depends ($depends) lacks $library"
done
[[ $depends != *libswift* ]] || fail "Depends names the Swift runtime: $depends"
info=$(dpkg-deb --info "$deb")
[[ $info == *"conffiles"* ]] || fail "no conffiles in the control area"

# MARK: - Contents
contents=$(dpkg-deb --contents "$deb")
for path in \
    ./usr/bin/netactivityd \
    ./usr/bin/netactivity \
    ./usr/share/dbus-1/services/io.github.netactivity.NetActivity1.service \
    ./usr/share/dbus-1/interfaces/io.github.netactivity.NetActivity1.xml \
    ./usr/lib/systemd/user/netactivityd.service \
    ./usr/share/man/man1/netactivity.1.gz \
    ./usr/share/man/man8/netactivityd.8.gz \
    ./usr/share/bash-completion/completions/netactivity \
    ./usr/share/zsh/site-functions/_netactivity \
    ./usr/share/fish/vendor_completions.d/netactivity.fish \
    ./usr/share/icons/hicolor/scalable/status/io.github.netactivity.NetActivity-active.svg \
    ./usr/share/icons/hicolor/scalable/status/io.github.netactivity.NetActivity-idle.svg \
    ./usr/share/icons/hicolor/scalable/status/io.github.netactivity.NetActivity-active-symbolic.svg \
    ./usr/share/icons/hicolor/scalable/status/io.github.netactivity.NetActivity-idle-symbolic.svg \
    ./etc/xdg/autostart/netactivity-tray.desktop \
    ./etc/xdg/autostart/netactivity-bridge.desktop \
    ./usr/lib/systemd/user/netactivity-bridge.service \
    ./usr/share/netactivity/gnome-shell/shell43/extension.js \
    ./usr/share/netactivity/gnome-shell/shell45/extension.js \
    ./usr/share/netactivity/gnome-shell/shell45/metadata.json \
    ./usr/lib/netactivity/netactivity-browser-host \
    ./usr/lib/mozilla/native-messaging-hosts/io.github.netactivity.browser.json \
    ./etc/chromium/native-messaging-hosts/io.github.netactivity.browser.json \
    ./usr/share/netactivity/chrome/io.github.netactivity.browser.json \
    ./usr/share/dbus-1/system.d/io.github.netactivity.NetActivity1.conf \
    ./usr/share/dbus-1/system-services/io.github.netactivity.NetActivity1.service \
    ./usr/lib/systemd/system/netactivityd-system.service \
    ./usr/lib/systemd/system/netactivity-bridge-system.service \
    ./usr/lib/systemd/system/multi-user.target.wants/netactivity-bridge-system.service \
    ./usr/share/doc/netactivity/copyright \
    ./usr/share/doc/netactivity/changelog.Debian.gz; do
    [[ $contents == *" $path"$'\n'* || $contents == *" $path" || $contents == *" $path -> "* ]] \
        || fail "$path is not in the package"
done
[[ $contents != *" ./usr/local"* && $contents != *" ./home"* ]] || fail "files outside /usr and /etc"
# The licence, in Debian's machine-readable copyright format (DEP-5; Expat is its name for MIT).
copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/netactivity/copyright)
[[ $(sed -n 1p <<<"$copyright") == "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ]] \
    || fail "the copyright file is not in the machine-readable format"
[[ $copyright == *$'\nLicense: Expat\n'* ]] || fail "the copyright file does not name the licence (Expat, the MIT licence)"

# MARK: - lintian
if ! lintian_output=$(lintian --fail-on error "$deb" 2>&1); then
    fail "lintian reports errors:"$'\n'"$lintian_output"
elif [ -n "$lintian_output" ]; then
    echo "check-deb: lintian (no errors):"$'\n'"$lintian_output"
fi

# MARK: - Installed into a scratch root, run, removed
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info" "$root/var/log"
touch "$root/var/lib/dpkg/status"
# The scratch database lists none of the system's packages, so the dependencies cannot be met
# there; the real ones are checked on Depends above.
scratch_dpkg() { dpkg --root="$root" --force-not-root --force-depends --force-script-chrootless "$@"; }
if ! installed=$(scratch_dpkg --install "$deb" 2>&1); then
    fail "dpkg --install failed:"$'\n'"$installed"
fi
upstream=${version%-*}
for program in netactivityd netactivity; do
    printed=$(env -i PATH=/usr/bin:/bin "$root/usr/bin/$program" --version) || fail "$program --version failed"
    [ "$printed" = "$program $upstream" ] || fail "$program --version printed '$printed', not '$program $upstream'"
    linked=$(ldd "$root/usr/bin/$program")
    [[ $linked != *libswift* && $linked != *libdispatch* ]] || fail "$program links the Swift runtime dynamically"
done
# No gnome-shell in the scratch database: the ES-module build, for GNOME 45 and later.
extension=$(readlink "$root/usr/share/gnome-shell/extensions/netactivity@netactivity.github.io" || true)
[ "$extension" = /usr/share/netactivity/gnome-shell/shell45 ] ||
    fail "postinst linked the GNOME Shell extension to '$extension', not the ES-module build"
[ -L "$root/etc/opt/chrome/native-messaging-hosts/io.github.netactivity.browser.json" ] ||
    fail "postinst did not link Google Chrome's host manifest"
activation=$(cat "$root/usr/share/dbus-1/services/io.github.netactivity.NetActivity1.service")
[[ $activation == *"Exec=/usr/bin/netactivityd"* ]] || fail "the activation file does not start /usr/bin/netactivityd"
bridge_unit=$(cat "$root/usr/lib/systemd/system/netactivity-bridge-system.service")
[[ $bridge_unit == *"ExecStart=/usr/bin/netactivity --system bridge"* ]] \
    || fail "the system-side bridge's unit does not start /usr/bin/netactivity --system bridge"
[ "$(readlink "$root/usr/lib/systemd/system/multi-user.target.wants/netactivity-bridge-system.service")" \
    = ../netactivity-bridge-system.service ] || fail "the system-side bridge does not start at boot"
for page in netactivity netactivityd; do
    rendered=$(MANPATH=$root/usr/share/man LC_ALL=C MANWIDTH=80 man -P cat "$page" 2>&1) \
        && [[ $rendered == *SYNOPSIS* ]] || fail "man $page does not find the installed page: $rendered"
done
grep -q '^netactivity-bridge:' "$root/etc/passwd" 2>/dev/null ||
    fail "postinst did not make the system-side bridge's user netactivity-bridge"
removed=$(scratch_dpkg --purge netactivity 2>&1) || fail "dpkg --purge failed:"$'\n'"$removed"
# The user database stays, with the bridge's user in it: Debian leaves system users on purge.
left=$(cd "$root" && find . \( -path ./var -o -path ./etc/passwd -o -path ./etc/group -o -path ./etc/shadow \
    -o -path ./etc/gshadow -o -path ./etc/.pwd.lock \) -prune -o -type f -print)
[ -z "$left" ] || fail "purging left files behind: $left"

if [ "$failures" -gt 0 ]; then
    echo "check-deb: $deb: $failures problem(s)" >&2
    exit 1
fi
echo "check-deb: $deb is well-formed, lintian-clean and runs (version $version)"
