#!/usr/bin/env bash
# netactivity tray in real KDE Plasma 6 (docs/development.md): Plasma 6.3 in Debian 13 (trixie),
# 6.7 in forky, each in a Debian root made by desktops/root.sh, checked by tray_test.py beside
# this script on the Breeze, Adwaita and hicolor icon themes.
#
# usage: desktops/plasma/test-tray.sh SUITE BINDIR [CHECK...]
#
# CHECK is tray (tray_test.py) or jobs (jobs_test.py: the bridge's plasma-jobs source, with
# jobs-popup.png, plasmashell's popup for a mirrored transfer); both by default, each in a
# session of its own, its time printed.
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
if [ $# -lt 2 ]; then
    echo "usage: $0 SUITE BINDIR [tray] [jobs]" >&2
    exit 2
fi
suite=$1
bin=$(cd "$2" && pwd)
shift 2
checks=${*:-tray jobs}
for program in netactivityd netactivity; do
    [ -x "$bin/$program" ] || { echo "plasma-$suite: no $bin/$program (make release-static)" >&2; exit 1; }
done
shots=$repo/.build/desktops/plasma-$suite
rm -rf "$shots"
mkdir -p "$shots"
# The test runs as the root's user tester (uid 1000).
chmod 0777 "$shots"
status=0
for check in $checks; do
    SECONDS=0
    # Each check's logs in a folder of its own: both start the same programs.
    logs=$shots
    [ "$check" = tray ] || { logs=$shots/$check; mkdir -p "$logs"; chmod 0777 "$logs"; }
    "$repo/desktops/root.sh" session "$suite" --private-network \
        --ro-bind "$bin:/opt/netactivity/bin" --ro-bind "$repo/data/icons:/opt/netactivity/share/icons" \
        --ro-bind "$here:/opt/netactivity/test" --bind "$logs:/opt/netactivity/screenshots" \
        -- python3 "/opt/netactivity/test/${check}_test.py" /opt/netactivity /opt/netactivity/screenshots \
        2>"$logs/session.log" || status=$?
    if [ $status = 0 ]; then
        echo "plasma-$suite: $check passed in $SECONDS s (pictures in $logs)"
    else
        # What the session printed (the bus, Qt, a Python traceback): the programs' own logs are
        # beside it.
        tail -n 15 "$logs/session.log" >&2
        echo "plasma-$suite: $check FAILED after $SECONDS s (pictures and logs in $logs)" >&2
        break
    fi
done
exit $status
