#!/usr/bin/env bash
# Runs the extension's shell test (tests/test-shell.sh, driven by tests/shell_test.py) in the
# real GNOME Shell of a Debian root made by desktops/root.sh: trixie's 48, forky's 50, sid's 51.
#
# usage: gnome-extension/tests/test-shell-root.sh SUITE BINDIR
#
#   SUITE    a suite of desktops/root.sh with gnome-shell in its package list
#   BINDIR   the directory holding netactivityd and netactivity (make passes the -static-stdlib
#            release build, which needs nothing of the toolchain inside a root)
#   $NETACTIVITY_DESKTOPS  where the screenshots and logs go, in gnome-SUITE/ (default
#            .build/desktops): gnome-top-bar.png, gnome-menu.png, gnome-shell.log,
#            netactivityd.log, session.log
#
# Inside, the test runs as the root's user `tester` (uid 1000) with the root's own gnome-shell,
# python3-gi and dbus, on the same private buses as on the host. The namespace root.sh makes
# ends every process and mount the test left when it ends, passed or not.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# != 2 ] || [ ! -x "$2/netactivityd" ] || [ ! -x "$2/netactivity" ]; then
    echo "usage: $0 SUITE BINDIR   (BINDIR holding netactivityd and netactivity)" >&2
    exit 2
fi
suite=$1
bindir=$(cd "$2" && pwd)
extension=$(cd "$here/.." && pwd)
out=${NETACTIVITY_DESKTOPS:-$here/../../.build/desktops}/gnome-$suite
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.png "$out"/*.log

binds=(--ro-bind "$extension:/netactivity/gnome-extension" --ro-bind "$bindir:/netactivity/bin"
       --bind "$out:/netactivity/out")
# A debug build links the Swift runtime from its toolchain, which the root lacks: the
# toolchain goes in read-only at the same path.
toolchain=$( { ldd "$bindir/netactivityd" 2>/dev/null || true; } |
    sed -n 's|.* => \(/.*\)/usr/lib/swift/linux/libswiftCore\.so .*|\1|p')
if [ -n "$toolchain" ]; then binds+=(--ro-bind "$toolchain:$toolchain"); fi

SECONDS=0
# tester writes into a folder of its own, copied out by root however the test ended.
"$here/../../desktops/root.sh" enter "$suite" --private-network "${binds[@]}" -- /bin/sh -c '
    install -d -o tester -g tester /tmp/out
    status=0
    runuser -u tester -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 SCREENSHOTS=/tmp/out LOGS=/tmp/out \
        /netactivity/gnome-extension/tests/test-shell.sh /netactivity/bin/netactivityd || status=$?
    cp /tmp/out/* /netactivity/out/ 2>/dev/null
    exit $status' || {
    status=$?
    echo "test-desktop-gnome-$suite: failed after $SECONDS s; the logs are in $out" >&2
    exit $status
}
echo "test-desktop-gnome-$suite: passed in $SECONDS s; screenshots and logs in $out"
