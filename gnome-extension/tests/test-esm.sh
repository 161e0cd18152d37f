#!/usr/bin/env bash
# Checks the GNOME 45+ build (an ES module) under `gjs -m`, with stand-ins for the shell's
# own modules (tests/esm/load.js says what it checks): the most this machine, with GNOME 43,
# can check of GNOME 45 and later.
#
# usage: gnome-extension/tests/test-esm.sh NETACTIVITYD
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
netactivityd=${1:-${NETACTIVITYD:-}}
if [ -z "$netactivityd" ] || [ ! -x "$netactivityd" ]; then
    echo "usage: $0 NETACTIVITYD" >&2
    exit 2
fi
netactivityd=$(cd "$(dirname "$netactivityd")" && pwd)/$(basename "$netactivityd")
work=$(mktemp -d /tmp/netactivity-gjs.XXXXXX)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$here/../build.py" "$work/build" >/dev/null
glib-compile-resources --sourcedir "$here/esm/stand-ins" --target "$work/stand-ins.gresource" \
    "$here/esm/stand-ins.gresource.xml"
# St and Clutter are private to the shell and mutter: their typelibs and libraries live in
# their own folders (mutter's is numbered by its API version).
shell_libs=$(printf '%s:' /usr/lib/gnome-shell /usr/lib/*/mutter-*)
# The system side on the same private bus: the extension follows both.
GI_TYPELIB_PATH=$shell_libs LD_LIBRARY_PATH=$shell_libs dbus-run-session -- \
    bash -c 'DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS exec gjs -m "$@"' gjs \
    "$here/esm/load.js" "$work/stand-ins.gresource" "$work/build/shell45/netactivity@netactivity.github.io" \
    "$netactivityd" 2>"$work/stderr" || {
    status=$?
    cat "$work/stderr" >&2
    exit $status
}
# The extension's merged progress against the table the Swift merge is held to.
gjs -m "$here/merged-progress.js" "$here/../src" "$here/merged-progress-cases.json" >"$work/merged" || {
    status=$?
    cat "$work/merged" >&2
    exit $status
}
