#!/usr/bin/env bash
# Runs netactivityd in the foreground on the session bus. Where there is no session bus (a
# headless box, a container), it starts a private dbus-daemon, prints its address and a
# busctl line to try, and stops that bus when the service stops (Ctrl-C). Used by `make run`.
#
# usage: scripts/run-service.sh NETACTIVITYD [ARGUMENTS...]
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 NETACTIVITYD [ARGUMENTS...]" >&2
    exit 2
fi
service=$1
shift
name=io.github.netactivity.NetActivity1
path=/io/github/netactivity/NetActivity1

# A session bus counts only if it answers: a stale DBUS_SESSION_BUS_ADDRESS (an ssh login
# whose desktop session ended) would make the service fail at once.
session_bus_answers() {
    dbus-send --session --print-reply --reply-timeout=2000 --dest=org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] && [ -n "${XDG_RUNTIME_DIR:-}" ] \
    && [ -S "$XDG_RUNTIME_DIR/bus" ]; then
    export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
fi
if [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] && session_bus_answers; then
    echo "netactivityd: on the session bus ($DBUS_SESSION_BUS_ADDRESS); try:"
    echo "  busctl --user call $name $path $name Push"
    echo "  busctl --user get-property $name $path $name Active Count Visible"
    exec "$service" "$@"
fi

# No session bus: a private one. With --fork, dbus-daemon prints its address and pid once it
# is listening, then detaches into its own session, out of reach of Ctrl-C; the trap stops it.
{ read -r address && read -r bus_pid; } < <(dbus-daemon --session --fork --print-address=1 --print-pid=1)
trap 'kill "$bus_pid" 2>/dev/null || true' EXIT
export DBUS_SESSION_BUS_ADDRESS=$address
echo "netactivityd: no session bus; started a private one (pid $bus_pid):"
echo "  export DBUS_SESSION_BUS_ADDRESS='$address'"
echo "try, from another terminal:"
echo "  busctl --address='$address' call $name $path $name Push"
echo "  busctl --address='$address' get-property $name $path $name Active Count Visible"

# The service runs as a child (not exec) so the trap can stop the bus after it. Ctrl-C reaches
# the service directly; a SIGTERM or SIGHUP sent to this script is passed on to it.
"$service" --address "$address" "$@" &
service_pid=$!
trap 'kill -TERM "$service_pid" 2>/dev/null || true' INT TERM HUP
while kill -0 "$service_pid" 2>/dev/null; do
    wait "$service_pid" || true # returns early when a trapped signal arrives
done
status=0
wait "$service_pid" || status=$? # bash kept the status of the reaped child
exit "$status"
