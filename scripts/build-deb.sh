#!/usr/bin/env bash
# Builds the Debian package netactivity_VERSION_ARCH.deb from release binaries built with
# -static-stdlib (`make deb` builds them first). The files are staged with `make install
# PREFIX=/usr` (which strips the binaries) under .build/deb/debian/netactivity (where
# dpkg-shlibdeps expects a package's files; `make install` includes the GNOME Shell extension, in
# /usr/share/gnome-shell/extensions), then the Debian parts are added: gzipped man pages,
# copyright and changelog.Debian.gz (from debian/), the tray's autostart entry in
# /etc/xdg/autostart, the browsers' native messaging host manifests, and DEBIAN/control with
# the shared libraries dpkg-shlibdeps finds.
#
# usage: scripts/build-deb.sh BINDIR [OUTDIR]     build OUTDIR/netactivity_VERSION_ARCH.deb (OUTDIR: .)
#        scripts/build-deb.sh --name BINDIR       print the path it would build, and nothing else
#
# VERSION is netactivityd --version (NetActivityBus.version, the one place the version lives)
# with the Debian revision of debian/changelog's first entry, whose upstream part must match.
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."

name_only=false
if [ "${1:-}" = --name ]; then
    name_only=true
    shift
fi
if [ $# -lt 1 ]; then
    echo "usage: $0 [--name] BINDIR [OUTDIR]" >&2
    exit 2
fi
bin=$1
out=${2:-.}

upstream=$("$bin/netactivityd" --version)
upstream=${upstream#netactivityd }
first_entry=$(sed -n 1p debian/changelog)
if [[ ! $first_entry =~ ^netactivity\ \((.+)-([^-]+)\) ]] || [ "${BASH_REMATCH[1]}" != "$upstream" ]; then
    echo "build-deb: debian/changelog's first entry ($first_entry) is not for version $upstream;" \
        "add an entry for it" >&2
    exit 1
fi
version=$upstream-${BASH_REMATCH[2]}
arch=$(dpkg --print-architecture)
deb=$out/netactivity_${version}_${arch}.deb
if $name_only; then
    echo "$deb"
    exit 0
fi

work=.build/deb
stage=$work/debian/netactivity
rm -rf "$work"
mkdir -p "$stage/DEBIAN"
# systemd looks for user units of packages in /usr/lib/systemd/user.
make --no-print-directory install DESTDIR="$PWD/$stage" PREFIX=/usr systemduserunitdir=/usr/lib/systemd/user \
    NETACTIVITYD="$bin/netactivityd" NETACTIVITY="$bin/netactivity" >/dev/null
# The system side: netactivityd's system-bus policy, activation file and unit, and the
# system-side bridge's unit, which starts at boot (its multi-user.target.wants link) and reports
# the system services' transfers; an admin turns it off with `systemctl mask`.
make --no-print-directory install-system DESTDIR="$PWD/$stage" PREFIX=/usr \
    NETACTIVITYD="$bin/netactivityd" NETACTIVITY="$bin/netactivity" >/dev/null

gzip -9n "$stage/usr/share/man/man1/netactivity.1" "$stage/usr/share/man/man8/netactivityd.8"
# Every user's tray and bridge start at login; a user turns one off with Hidden=true in
# ~/.config/autostart.
install -d "$stage/etc/xdg/autostart"
mv "$stage/usr/share/netactivity/netactivity-tray.desktop" "$stage/usr/share/netactivity/netactivity-bridge.desktop" \
    "$stage/etc/xdg/autostart/"
rmdir "$stage/usr/share/netactivity"
# The browsers' native messaging host, for every user: Firefox reads /usr/lib/mozilla,
# Chromium and Google Chrome their directories in /etc. `make install` put the wrapper the
# manifests name in /usr/lib/netactivity. Google Chrome's, in /etc/opt/chrome, is a link that
# debian/postinst makes to the copy in /usr/share/netactivity/chrome (see there why).
for entry in usr/lib/mozilla/native-messaging-hosts:firefox etc/chromium/native-messaging-hosts:chromium \
    usr/share/netactivity/chrome:chromium; do
    install -d "$stage/${entry%:*}"
    sed -e 's|@path@|/usr/lib/netactivity/netactivity-browser-host|g' "browser-extension/host/${entry##*:}.json.in" \
        > "$stage/${entry%:*}/io.github.netactivity.browser.json"
    chmod 0644 "$stage/${entry%:*}/io.github.netactivity.browser.json"
done
# Both builds of the GNOME Shell extension; debian/postinst links the one the installed shell
# loads into /usr/share/gnome-shell/extensions, where `make install` put this machine's.
rm -r "$stage/usr/share/gnome-shell"
for format in shell43 shell45; do
    install -d "$stage/usr/share/netactivity/gnome-shell/$format"
    install -m 0644 ".build/gnome-extension/$format/netactivity@netactivity.github.io/"{extension.js,metadata.json,stylesheet.css} \
        "$stage/usr/share/netactivity/gnome-shell/$format/"
done
install -m 0755 debian/postinst debian/postrm "$stage/DEBIAN/"
install -m 0644 debian/triggers "$stage/DEBIAN/"
doc=$stage/usr/share/doc/netactivity
install -d "$doc"
install -m 0644 debian/copyright "$doc/copyright"
gzip -9n < debian/changelog > "$doc/changelog.Debian.gz"

# dpkg-shlibdeps runs where debian/control names the package.
printf 'Source: netactivity\n\nPackage: netactivity\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/netactivity/usr/bin/netactivityd debian/netactivity/usr/bin/netactivity)
depends=${depends#shlibs:Depends=}

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$size|" \
    -e "s|@DEPENDS@|$depends|" debian/control.in > "$stage/DEBIAN/control"
printf '%s\n' /etc/xdg/autostart/netactivity-tray.desktop /etc/xdg/autostart/netactivity-bridge.desktop \
    /etc/chromium/native-messaging-hosts/io.github.netactivity.browser.json > "$stage/DEBIAN/conffiles"
(cd "$stage" && find usr -type f -printf '%P\n' | sed 's|^|usr/|' | sort | xargs md5sum) > "$stage/DEBIAN/md5sums"

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "built $deb"
