#!/usr/bin/env bash
# The .deb on a real Debian (docs/development.md): installed with apt-get into a throw-away copy
# of a root made by desktops/root.sh, run in a user's session there, then purged.
#
# usage: desktops/test-deb.sh SUITE PATH.deb
#
# Inside the root, as root: `apt-get install ./PATH.deb` (its dependencies come from the root's
# packages, or from the mirror). Then as the user tester (uid 1000) under dbus-run-session, with
# a system bus running as a desktop has one:
# - `netactivity status` answers through netactivityd, which D-Bus activation starts from the
#   package's activation file;
# - the tray and the bridge start from the package's XDG autostart entries, as a login starts
#   them: the bridge owns io.github.netactivity.Bridge, the tray its item, which kded6's
#   StatusNotifierWatcher lists, with IconThemePath /usr/share/icons and its own icon, which the
#   package put in hicolor; both end with status 0 on SIGTERM;
# then, as root, the system-side bridge as its own user, reporting to netactivityd --system;
# and, as root again, `apt-get purge` leaves the file system as it found it.
set -euo pipefail

# The script runs in three places: on the host; inside the root as root (--inside SUITE DEB);
# in the user's session there (--inside --session DEB).
stage=host
if [ "${1:-}" = --inside ]; then
    stage=root
    shift
    if [ "${1:-}" = --session ]; then
        stage=session
    fi
fi
if [ $# -ne 2 ]; then
    echo "usage: $0 SUITE PATH.deb" >&2
    exit 2
fi
suite=$1
deb=$2

fail() {
    echo "test-deb: $*" >&2
    exit 1
}

# MARK: - On the host

if [ $stage = host ]; then
    here=$(cd "$(dirname "$0")" && pwd)
    [ -f "$deb" ] || fail "no package $deb (make deb)"
    deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
    SECONDS=0
    "$here/root.sh" enter "$suite" --ro-bind "$here:/opt/netactivity-test" \
        --ro-bind "$(dirname "$deb"):/opt/netactivity-deb" \
        -- /opt/netactivity-test/test-deb.sh --inside "$suite" "/opt/netactivity-deb/$(basename "$deb")"
    echo "test-deb: $(basename "$deb") installed, ran and purged on $suite in $SECONDS s"
    exit 0
fi

# MARK: - Inside the root, as root

# The file system as another package sees it: not what the kernel, the package manager's own
# records and logs keep, nor what the session wrote in the user's home.
files() {
    find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
        -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \
        -o -path /home -o -path /root \) -prune \
        -o -print | sort
}

session() {
    # What `desktops/root.sh session` sets up: a system bus, and the user's runtime directory.
    mkdir -p /run/dbus /run/user/1000
    chown 1000:1000 /run/user/1000
    chmod 0700 /run/user/1000
    dbus-daemon --system --fork --nopidfile >/dev/null
    runuser -u tester -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/home/tester USER=tester \
        XDG_RUNTIME_DIR=/run/user/1000 dbus-run-session -- "$0" --inside --session "$deb"
}

# The system side as the package sets it up: the bridge's own user, made by the package, may own
# the bridge's name and report to netactivityd --system (which the system bus activates), as the
# bus policy says; the user tester may not report.
system_side() {
    getent passwd netactivity-bridge >/dev/null || fail "the package did not make the user netactivity-bridge"
    system_owned() {
        gdbus call --system -d org.freedesktop.DBus -o /org/freedesktop/DBus \
            -m org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true
    }
    runuser -u netactivity-bridge -- netactivity --system bridge >/tmp/bridge-system.log 2>&1 &
    local bridge=$!
    for _ in $(seq 100); do
        system_owned io.github.netactivity.Bridge && break
        sleep 0.1
    done
    system_owned io.github.netactivity.Bridge ||
        fail "the system-side bridge, as netactivity-bridge, does not own its name: $(cat /tmp/bridge-system.log)"
    local said
    said=$(runuser -u netactivity-bridge -- netactivity --system run --label "system check" -- true 2>&1) ||
        fail "netactivity run as netactivity-bridge failed: $said"
    [ -z "$said" ] || fail "netactivity-bridge may not report to the system service: $said"
    said=$(runuser -u tester -- netactivity --system run --label "system check" -- true 2>&1) || true
    grep -q "Rejected send message" <<<"$said" || fail "the user tester reported to the system service: '$said'"
    kill -0 $bridge 2>/dev/null || fail "the system-side bridge exited: $(cat /tmp/bridge-system.log)"
    kill $bridge
    wait $bridge || true
    echo "test-deb: the system-side bridge runs as netactivity-bridge, which alone with root reports to the system service"
}

if [ $stage = root ]; then
    before=$(files)
    apt-get install -y -q --no-install-recommends "$deb" >/tmp/install.log 2>&1 ||
        { cat /tmp/install.log >&2; fail "apt-get install $deb failed"; }
    echo "test-deb: installed $(dpkg-query -W -f '${Package} ${Version}' netactivity)"
    for icon in active idle active-symbolic idle-symbolic; do
        [ -f "/usr/share/icons/hicolor/scalable/status/io.github.netactivity.NetActivity-$icon.svg" ] ||
            fail "the package did not install the tray's $icon icon in hicolor"
    done
    # Debian 13's GNOME Shell 48 loads the ES-module build, which lists it.
    extension=/usr/share/gnome-shell/extensions/netactivity@netactivity.github.io
    grep -q '"48"' "$extension/metadata.json" 2>/dev/null && [ "$(readlink "$extension")" = /usr/share/netactivity/gnome-shell/shell45 ] ||
        fail "the GNOME Shell extension is not the build GNOME Shell 48 loads: $(readlink "$extension")"
    chrome=/etc/opt/chrome/native-messaging-hosts/io.github.netactivity.browser.json
    grep -q '"name": "io.github.netactivity.browser"' "$chrome" 2>/dev/null ||
        fail "Google Chrome's host manifest is not at $chrome"
    session
    system_side
    apt-get purge -y -q netactivity >/tmp/purge.log 2>&1 || { cat /tmp/purge.log >&2; fail "apt-get purge failed"; }
    after=$(files)
    left=$(diff <(echo "$before") <(echo "$after") || true)
    [ -z "$left" ] || fail "purging did not leave the file system as it found it:"$'\n'"$left"
    echo "test-deb: purged; the file system is as before"
    exit 0
fi

# MARK: - Inside the root, in tester's session

pids=()
stop_all() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT

# Waits up to 10 s for COMMAND to succeed, polling; says what it waited for when it does not.
wait_for() {
    local what=$1
    shift
    for _ in $(seq 100); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    fail "timed out waiting for $what"
}
owned() { gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner "$1" | grep -q true; }
property() {
    gdbus call --session -d "$1" -o "$2" -m org.freedesktop.DBus.Properties.Get "$3" "$4"
}
# The command of an XDG autostart entry, as a session runs it.
autostart() { sed -n 's/^Exec=//p' "/etc/xdg/autostart/netactivity-$1.desktop"; }

owned io.github.netactivity.NetActivity1 && fail "netactivityd runs before anything asked for it"
status=$(netactivity status) || fail "netactivity status failed: $status"
echo "test-deb: netactivity status:"
sed 's/^/    /' <<<"$status"
owned io.github.netactivity.NetActivity1 || fail "D-Bus activation did not start netactivityd"
[ "$(property io.github.netactivity.NetActivity1 /io/github/netactivity/NetActivity1 \
    io.github.netactivity.NetActivity1 Version)" = "(<'$(netactivityd --version | cut -d' ' -f2)'>,)" ] ||
    fail "the activated service is not the package's netactivityd"

# A watcher, as Plasma's kded6 provides one, without a display. kded6 owns the watcher's name
# from the start but loads the module behind it when Plasma's system tray asks, as here.
QT_QPA_PLATFORM=offscreen kded6 >/tmp/kded6.log 2>&1 &
pids+=($!)
wait_for "kded6" owned org.kde.kded6
gdbus call --session -d org.kde.kded6 -o /kded -m org.kde.kded6.loadModule statusnotifierwatcher >/dev/null
wait_for "kded6's StatusNotifierWatcher" property org.kde.StatusNotifierWatcher /StatusNotifierWatcher \
    org.kde.StatusNotifierWatcher RegisteredStatusNotifierItems

$(autostart tray) 2>/tmp/tray.log &
tray=$!
pids+=($tray)
$(autostart bridge) 2>/tmp/bridge.log &
bridge=$!
pids+=($bridge)
item=org.kde.StatusNotifierItem-$tray-1
wait_for "the watcher to list the tray's item" sh -c "gdbus call --session -d org.kde.StatusNotifierWatcher \
    -o /StatusNotifierWatcher -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierWatcher \
    RegisteredStatusNotifierItems | grep -q $item"
wait_for "the bridge to own io.github.netactivity.Bridge" owned io.github.netactivity.Bridge
for check in "IconThemePath:/usr/share/icons" "IconName:io.github.netactivity.NetActivity-idle"; do
    value=$(property "$item" /StatusNotifierItem org.kde.StatusNotifierItem "${check%%:*}")
    [ "$value" = "(<'${check#*:}'>,)" ] || fail "the tray's ${check%%:*} is $value, not '${check#*:}'"
done
echo "test-deb: the tray ($item, listed by the watcher, its icons in /usr/share/icons) and the bridge run"

for name in tray bridge; do
    pid=${!name}
    kill -TERM "$pid"
    code=0
    wait "$pid" || code=$?
    [ $code = 0 ] || fail "netactivity $name ended with status $code on SIGTERM: $(cat /tmp/$name.log)"
done
