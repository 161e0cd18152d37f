#!/bin/bash
# The scratch property (docs/architecture.md, "Where to add things"): a copy of the repository
# gains an activity property, Retries, with exactly the edits the doc lists and no other: its
# declaration, the model's logic that sets it, a line of docs/interface.md. Then the copy's
# service and command line run on a private bus, a transfer starts over, and
# `netactivity status --json` must print "retries": 1. So the doc's count stays the count.
#
# usage: scripts/scratch-property.sh [SCRATCH]   (default .build/scratch-property)
#
# The copy and its build stay in SCRATCH, so a second run rebuilds only what the edits touch.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(realpath -m "${1:-$repo/.build/scratch-property}")
copy=$scratch/repository
fail() { echo "scratch-property: $*" >&2; exit 1; }
SECONDS=0

# The repository as it is now, without what .gitignore names, made afresh each run so a file
# removed here is gone there too; the times are kept, so an unchanged file is not rebuilt. tar,
# not git: CI may hand over a tree with no .git. Each .gitignore line becomes a tar exclusion
# (tar's own --exclude-vcs-ignores misses `dir/`): with a slash before its end it is anchored
# at the top, as git anchors it; without, it matches at any depth.
excludes=()
while IFS= read -r pattern; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    pattern=${pattern%/}
    case $pattern in
    /*) excludes+=("--exclude=.$pattern") ;;
    */*) excludes+=("--exclude=./$pattern") ;;
    *) excludes+=("--exclude=$pattern") ;;
    esac
done <"$repo/.gitignore"
rm -rf "$copy" && mkdir -p "$copy"
(cd "$repo" && tar -c --exclude-vcs "${excludes[@]}" .) | tar -x -C "$copy" ||
    fail "cannot copy the repository into $copy"

# replace FILE OLD NEW: OLD, which must be found once (or the doc's steps no longer match the
# code), becomes NEW.
replace() {
    python3 -c '
import sys
path, old, new = sys.argv[1:]
source = open(path).read()
if source.count(old) != 1:
    sys.exit(f"{path}: {old!r} is found {source.count(old)} times, not once")
open(path, "w").write(source.replace(old, new))
' "$copy/$1" "$2" "$3" || fail "the doc's step no longer fits $1"
}

# 1. The declaration: the descriptor, and its line in `properties` with the key path that holds it.
replace Sources/NetActivityContract/Declaration/NetActivityInterface.swift \
    'rate.held(\.rate),' 'rate.held(\.rate), retries.held(\.retries),'
replace Sources/NetActivityContract/Declaration/NetActivityInterface.swift \
    'public enum ActivityObjectInterface {' 'public enum ActivityObjectInterface {
    public static let retries = PropertyDescriptor<UInt32>(
        "Retries", doc: "how many times the transfer started over. Announced with Completed.")'
# 2. The model: the field, and the logic that sets it (a byte count that goes back is a retry).
replace Sources/NetActivityModel/Activity.swift \
    '    public var rate: Double' '    public var rate: Double
    /// How many times the transfer started over.
    public var retries: UInt32 = 0'
replace Sources/NetActivityModel/Ledger.swift \
    '        activity.completed = completed
' '        if completed < activity.completed { activity.retries += 1 }
        activity.completed = completed
'
# 3. The doc line.
replace docs/interface.md \
    '| `Kind` | `s` | the `kind` hint; `other` without one | never (const) |' '| `Kind` | `s` | the `kind` hint; `other` without one | never (const) |
| `Retries` | `u` | how many times the transfer started over | throttled, per object, with the progress |'

echo "scratch-property: the three edits made in $copy" >&2
swift build --package-path "$copy" --scratch-path "$scratch/build" --product netactivityd >"$scratch/build.log" 2>&1 &&
    swift build --package-path "$copy" --scratch-path "$scratch/build" --product netactivity >>"$scratch/build.log" 2>&1 ||
    { tail -n 30 "$scratch/build.log" >&2; fail "the copy with the property does not build (log: $scratch/build.log)"; }
bin=$(swift build --package-path "$copy" --scratch-path "$scratch/build" --show-bin-path)
echo "scratch-property: built in $SECONDS s" >&2

# A private session bus (never the user's), the copy's service on it, and a reporter whose
# transfer goes back from 600 to 200 bytes, held open while status reads.
printed=$(dbus-run-session -- /usr/bin/python3 - "$bin" <<'EOF'
import subprocess, sys
from gi.repository import Gio, GLib
bin = sys.argv[1]
service = subprocess.Popen([f"{bin}/netactivityd"])
try:
    bus = Gio.bus_get_sync(Gio.BusType.SESSION)
    name, path, interface = "io.github.netactivity.NetActivity1", "/io/github/netactivity/NetActivity1", "io.github.netactivity.NetActivity1"
    # Waits for the name to appear (the bus's NameOwnerChanged), or the service to end.
    loop, appeared = GLib.MainLoop(), []
    Gio.bus_watch_name_on_connection(bus, name, Gio.BusNameWatcherFlags.NONE, lambda *_: (appeared.append(True), loop.quit()), None)
    GLib.child_watch_add(GLib.PRIORITY_DEFAULT, service.pid, lambda *_: loop.quit())
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    if not appeared:
        raise SystemExit("the copy's netactivityd never took its name")
    def call(method, args, reply=None):
        return bus.call_sync(name, path, interface, method, args, reply, Gio.DBusCallFlags.NONE, 5000, None)
    (id,) = call("BeginActivity", GLib.Variant("(s)", ("scratch transfer",)), GLib.VariantType("(u)")).unpack()
    call("UpdateActivity", GLib.Variant("(utt)", (id, 600, 1000)))
    call("UpdateActivity", GLib.Variant("(utt)", (id, 200, 1000)))
    print(subprocess.run([f"{bin}/netactivity", "status", "--json"], capture_output=True, text=True, check=True).stdout)
finally:
    service.terminate()
    service.wait()
EOF
) || fail "the copy's service and status did not run"
case "$printed" in
*'"retries":1'* | *'"retries": 1'*) echo "scratch-property: status --json prints \"retries\": 1 with no other edit ($SECONDS s)" ;;
*) fail "status --json has no \"retries\": 1: $printed" ;;
esac
