#!/usr/bin/env bash
# netactivity tray in real KDE Plasma 6 (docs/development.md): Plasma 6.3 in Debian 13 (trixie),
# 6.7 in forky, each in a Debian root made by desktops/root.sh, checked by tray_test.py beside
# this script on the Breeze, Adwaita and hicolor icon themes.
#
# usage: desktops/plasma/test-tray.sh SUITE BINDIR
#
# BINDIR holds netactivityd and netactivity (the -static-stdlib release build, which runs in any
# root). Inside the root they are at /opt/netactivity/bin, with the source tree's data/icons at
# /opt/netactivity/share/icons as an installation lays them out. The panel's pictures and the
# programs' logs are kept in .build/desktops/plasma-SUITE: THEME-active.png and
# THEME-ring-75.png are the item as Plasma draws it on the icon theme THEME, THEME-blank-slot.png
# an item whose icon is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -ne 2 ]; then
    echo "usage: $0 SUITE BINDIR" >&2
    exit 2
fi
suite=$1
bin=$(cd "$2" && pwd)
for program in netactivityd netactivity; do
    [ -x "$bin/$program" ] || { echo "plasma-$suite: no $bin/$program (make release-static)" >&2; exit 1; }
done
shots=$repo/.build/desktops/plasma-$suite
rm -rf "$shots"
mkdir -p "$shots"
# The test runs as the root's user tester (uid 1000).
chmod 0777 "$shots"
SECONDS=0
status=0
"$repo/desktops/root.sh" session "$suite" \
    --ro-bind "$bin:/opt/netactivity/bin" --ro-bind "$repo/data/icons:/opt/netactivity/share/icons" \
    --ro-bind "$here:/opt/netactivity/test" --bind "$shots:/opt/netactivity/screenshots" \
    -- python3 /opt/netactivity/test/tray_test.py /opt/netactivity /opt/netactivity/screenshots \
    2>"$shots/session.log" || status=$?
if [ $status = 0 ]; then
    echo "plasma-$suite: passed in $SECONDS s (pictures in $shots)"
else
    # What the session printed (the bus, Qt, a Python traceback): the programs' own logs are
    # beside it.
    tail -n 15 "$shots/session.log" >&2
    echo "plasma-$suite: FAILED after $SECONDS s (pictures and logs in $shots)" >&2
fi
exit $status
