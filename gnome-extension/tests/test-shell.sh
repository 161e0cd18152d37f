#!/usr/bin/env bash
# Runs the extension in the real, headless GNOME Shell of Debian's gnome-shell package against
# the real netactivityd, on private buses: tests/shell_test.py says what it checks. The same
# script runs this machine's shell (make test-gnome) and, through tests/test-shell-root.sh,
# the shell of a Debian root.
#
# usage: gnome-extension/tests/test-shell.sh NETACTIVITYD [EXTENSION_DIR]
#
#   NETACTIVITYD    the netactivityd binary (also $NETACTIVITYD); `netactivity` beside it pushes
#   EXTENSION_DIR   an installed extension to test (its uuid folder); default: built from src/,
#                   the build the installed gnome-shell loads (shell43 before 45, else shell45)
#   $SCREENSHOTS    where to save the README's screenshots (gnome-top-bar.png, gnome-menu.png)
#   $LOGS           where to keep the shell's, the services' and the session's logs
#
# The shell runs under dbus-run-session with a private HOME and XDG_RUNTIME_DIR, given to
# dbus-run-session itself because the services it starts (dconf) take the bus daemon's
# environment. The shell dies at start-up without a system bus on a machine with
# /run/systemd/seats, so a private, empty dbus-daemon stands in for it (and carries the
# system side's netactivityd --system). Mutter renders in software without a GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
netactivityd=${1:-${NETACTIVITYD:-}}
extension=${2:-}
tested=${extension:-the extension built from src/}
if [ -z "$netactivityd" ] || [ ! -x "$netactivityd" ]; then
    echo "usage: $0 NETACTIVITYD [EXTENSION_DIR]" >&2
    exit 2
fi
netactivityd=$(cd "$(dirname "$netactivityd")" && pwd)/$(basename "$netactivityd")
uuid=netactivity@netactivity.github.io
screenshots=
if [ -n "${SCREENSHOTS:-}" ]; then
    mkdir -p "$SCREENSHOTS"
    screenshots=$(cd "$SCREENSHOTS" && pwd)
fi

shell_version=$(gnome-shell --version | sed -n 's/^GNOME Shell \([0-9][0-9]*\).*/\1/p')
[ -n "$shell_version" ] || { echo "test-shell: no gnome-shell to run" >&2; exit 2; }
logs=
if [ -n "${LOGS:-}" ]; then
    mkdir -p "$LOGS"
    logs=$(cd "$LOGS" && pwd)
fi

work=$(mktemp -d /tmp/netactivity-gnome.XXXXXX)
home=$work/home
runtime=$work/runtime
system_bus=
# The processes of the test's session: every one whose HOME is the private one. Some outlive
# dbus-run-session (the shell starts ibus-daemon outside the bus's control).
session_processes() {
    local environ
    for environ in /proc/[0-9]*/environ; do
        if grep -qzx "HOME=$home" "$environ" 2>/dev/null; then
            environ=${environ#/proc/}
            echo "${environ%/environ}"
        fi
    done
}
cleanup() {
    if [ -n "$system_bus" ]; then kill "$system_bus" 2>/dev/null || true; wait "$system_bus" 2>/dev/null || true; fi
    local left _
    left=$(session_processes)
    if [ -n "$left" ]; then
        kill $left 2>/dev/null || true
        for _ in $(seq 40); do [ -z "$(session_processes)" ] && break; sleep 0.05; done
        left=$(session_processes)
        if [ -n "$left" ]; then kill -KILL $left 2>/dev/null || true; fi
    fi
    # xdg-document-portal's FUSE mount, when it had no time to unmount it.
    if mountpoint -q "$runtime/doc" 2>/dev/null; then
        fusermount3 -u "$runtime/doc" 2>/dev/null || fusermount -u "$runtime/doc" 2>/dev/null ||
            umount -l "$runtime/doc" 2>/dev/null || true
    fi
    if [ -n "$logs" ]; then cp "$work"/*.log "$logs/" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$home/.local/share/gnome-shell/extensions" "$runtime"
chmod 0700 "$runtime"
if [ -z "$extension" ]; then
    /usr/bin/python3 "$here/../build.py" "$work/build" >/dev/null
    format=shell45
    [ "$shell_version" -ge 45 ] || format=shell43
    extension=$work/build/$format/$uuid
fi
cp -r "$extension" "$home/.local/share/gnome-shell/extensions/$uuid"

dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/system_bus_socket" >"$work/system-bus.log" 2>&1 &
system_bus=$!
for _ in $(seq 100); do [ -S "$work/system_bus_socket" ] && break; sleep 0.05; done

SECONDS=0
env -i PATH="$PATH" HOME="$home" XDG_RUNTIME_DIR="$runtime" LANG=C.UTF-8 \
    XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" XDG_CACHE_HOME="$home/.cache" \
    DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/system_bus_socket" \
    dbus-run-session -- /usr/bin/python3 "$here/shell_test.py" --netactivityd "$netactivityd" --work "$work" \
    ${screenshots:+--images "$screenshots"} --report-fd 3 3>&1 >"$work/session.log" 2>&1 || {
    status=$?
    echo "--- the last lines the session's bus and its services wrote"
    tail -n 30 "$work/session.log"
    exit $status
}
echo "test-gnome: GNOME Shell $shell_version with $tested: passed in $SECONDS s"
