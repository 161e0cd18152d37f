# A GLib client of NetActivity, as a GNOME panel applet or a PyGObject app follows it: a
# GDBusObjectManagerClient on the service's objects, printing the live activities as one JSON
# line whenever they change (coalesced in an idle callback, as a widget would redraw).
#
# Usage: /usr/bin/python3 glib-watcher.py ADDRESS
#
# It outlives the service (the object manager follows the name's owner) and the bus: when the
# connection closes it connects again every 200 ms, as a session's applet would when its bus
# came back. Every line is {"owner": NAME or null, "activities": [{label, application,
# claimed_application, completed, total, fraction}, ...]} in id order.
import json
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

NAME = "io.github.netactivity.NetActivity1"
PATH = "/io/github/netactivity/NetActivity1"
ACTIVITY = "io.github.netactivity.NetActivity1.Activity"

address = sys.argv[1]
loop = GLib.MainLoop()
manager = None
pending = False
last = None


def value(proxy, name, default):
    variant = proxy.get_cached_property(name)
    return default if variant is None else variant.unpack()


def show():
    global pending, last
    pending = False
    activities = []
    if manager is not None:
        for obj in manager.get_objects():
            proxy = obj.get_interface(ACTIVITY)
            if proxy is None:
                continue
            activities.append({
                "id": value(proxy, "Id", 0),
                "label": value(proxy, "Label", ""),
                "application": value(proxy, "Application", ""),
                "claimed_application": value(proxy, "ClaimedApplication", ""),
                "completed": value(proxy, "Completed", 0),
                "total": value(proxy, "Total", 0),
                "fraction": value(proxy, "Fraction", -1.0),
            })
    activities.sort(key=lambda a: a["id"])
    owner = manager.get_name_owner() if manager is not None else None
    line = json.dumps({"owner": owner, "activities": activities}, sort_keys=True)
    if line != last:
        last = line
        print(line, flush=True)
    return False


def changed(*_):
    global pending
    if not pending:
        pending = True
        GLib.idle_add(show)


def connect():
    global manager
    try:
        connection = Gio.DBusConnection.new_for_address_sync(
            address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
    except GLib.Error:
        return True  # the bus is not back yet: try again
    # A closed bus must not end the process, as GLib's session singleton would.
    connection.set_exit_on_close(False)
    manager = Gio.DBusObjectManagerClient.new_sync(
        connection, Gio.DBusObjectManagerClientFlags.NONE, NAME, PATH, None, None, None)
    for signal in ("object-added", "object-removed", "interface-proxy-properties-changed", "notify::name-owner"):
        manager.connect(signal, changed)
    connection.connect("closed", lost)
    changed()
    return False


def lost(*_):
    global manager
    manager = None
    changed()
    GLib.timeout_add(200, connect)


if connect():
    GLib.timeout_add(200, connect)
loop.run()
