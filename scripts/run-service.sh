#!/usr/bin/env bash
# Runs netactivityd in the foreground on the session bus. Where there is no session bus (a
# headless box, a container), it starts a private dbus-daemon, prints its address and a
# busctl line to try, and stops that bus when the service stops (Ctrl-C). Used by `make run`.
#
# usage: scripts/run-service.sh [--then COMMAND [--then-built WHAT] [--then-log FILE]]
#                               NETACTIVITYD [ARGUMENTS...]
#
# --then: once the service owns its name, COMMAND runs in the background, its output in FILE
# (default .build/then.log): `make run` builds the command line there, so the service answers
# before that build is done. One line says when WHAT is ready, or that COMMAND failed. It is
# stopped if still running when the service stops.
set -euo pipefail

then_command=""
then_built=""
then_log=.build/then.log
while [ $# -gt 0 ]; do
    case $1 in
    --then) then_command=$2; shift 2 ;;
    --then-built) then_built=$2; shift 2 ;;
    --then-log) then_log=$2; shift 2 ;;
    *) break ;;
    esac
done
if [ $# -lt 1 ]; then
    echo "usage: $0 [--then COMMAND [--then-built WHAT] [--then-log FILE]] NETACTIVITYD [ARGUMENTS...]" >&2
    exit 2
fi
service=$1
shift
name=io.github.netactivity.NetActivity1
path=/io/github/netactivity/NetActivity1

# Waits (in the background) until the service owns its name on the bus dbus-send reaches, then
# runs --then's command. NameHasOwner, not a call to the service: that could activate an
# installed netactivityd instead of waiting for this one.
then_pid=""
service_owns_name() {
    local reply
    reply=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner "string:$name" 2>/dev/null) || return 1
    [[ $reply == *"boolean true"* ]]
}
start_then() {
    [ -n "$then_command" ] || return 0
    (
        build_pid=""
        # The command in a process group of its own (setsid), stopped as a whole: a build's
        # compilers with it.
        trap '[ -z "$build_pid" ] || kill -TERM -- "-$build_pid" 2>/dev/null; exit 143' TERM
        until service_owns_name; do
            kill -0 "$service_pid" 2>/dev/null || exit 0
            sleep 0.1
        done
        echo "netactivityd: answering; building ${then_built:-the rest} in the background (log: $then_log)"
        mkdir -p "$(dirname "$then_log")"
        setsid bash -c "$then_command" >"$then_log" 2>&1 &
        build_pid=$!
        if wait "$build_pid"; then
            echo "netactivityd: ${then_built:-the rest} is ready"
        else
            echo "netactivityd: the background build failed; see $then_log" >&2
        fi
    ) &
    then_pid=$!
}

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
# What stops with the service: the background build, and a private bus.
bus_pid=""
cleanup() {
    if [ -n "$then_pid" ]; then kill -TERM "$then_pid" 2>/dev/null || true; fi
    if [ -n "$bus_pid" ]; then kill "$bus_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

service_arguments=("$@")
if [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] && session_bus_answers; then
    echo "netactivityd: on the session bus ($DBUS_SESSION_BUS_ADDRESS); try:"
    echo "  busctl --user call $name $path $name Push"
    echo "  busctl --user get-property $name $path $name Active Count Visible"
    if [ -z "$then_command" ]; then
        exec "$service" "$@"
    fi
else
    # No session bus: a private one. With --fork, dbus-daemon prints its address and pid once
    # it is listening, then detaches into its own session, out of reach of Ctrl-C; the trap
    # stops it.
    { read -r address && read -r bus_pid; } < <(dbus-daemon --session --fork --print-address=1 --print-pid=1)
    export DBUS_SESSION_BUS_ADDRESS=$address
    echo "netactivityd: no session bus; started a private one (pid $bus_pid):"
    echo "  export DBUS_SESSION_BUS_ADDRESS='$address'"
    echo "try, from another terminal:"
    echo "  busctl --address='$address' call $name $path $name Push"
    echo "  busctl --address='$address' get-property $name $path $name Active Count Visible"
    service_arguments=(--address "$address" "$@")
fi

# The service runs as a child (not exec) so the trap can stop the bus and the background build
# after it. Ctrl-C reaches the service directly; a SIGTERM or SIGHUP sent to this script is
# passed on to it.
"$service" "${service_arguments[@]}" &
service_pid=$!
start_then
trap 'kill -TERM "$service_pid" 2>/dev/null || true' INT TERM HUP
while kill -0 "$service_pid" 2>/dev/null; do
    wait "$service_pid" || true # returns early when a trapped signal arrives
done
status=0
wait "$service_pid" || status=$? # bash kept the status of the reaped child
exit "$status"
