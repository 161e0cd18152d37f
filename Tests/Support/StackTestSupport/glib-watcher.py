# A GLib client of NetActivity, as a panel applet written with Gio follows it: one signal
# subscription for every signal on the bus (the ObjectManager's InterfacesAdded and
# InterfacesRemoved, each activity's PropertiesChanged, the bus's NameOwnerChanged), then
# GetManagedObjects, asked without blocking so that its reply is handled in the order it came
# among the signals. It prints the live activities as one JSON line whenever they change
# (coalesced in an idle callback, as a widget would redraw).
#
# Not GDBusObjectManagerClient (GLib 2.74): twice in a dozen starts of the loaded stack it
# kept a launcher entry's Fraction at -1 for a minute while the service and `watch` showed
# 0.25, an update that closely followed the activity's start lost. It hears InterfacesAdded
# through its control proxy and PropertiesChanged through a subscription of its own, and we
# think the two can run out of order; one subscription cannot.
#
# Usage: /usr/bin/python3 glib-watcher.py ADDRESS
#
# It outlives the service (it follows the name's owner) and the bus: when the connection closes
# it connects again every 200 ms, as a session's applet would when its bus came back. Every
# line is {"owner": NAME or null, "activities": [{id, label, application, claimed_application,
# completed, total, fraction}, ...]} in id order.
import json
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

NAME = "io.github.netactivity.NetActivity1"
PATH = "/io/github/netactivity/NetActivity1"
ACTIVITY = "io.github.netactivity.NetActivity1.Activity"
FIELDS = {"Id": "id", "Label": "label", "Application": "application", "ClaimedApplication": "claimed_application",
          "Completed": "completed", "Total": "total", "Fraction": "fraction"}

address = sys.argv[1]
loop = GLib.MainLoop()
connection = None
owner = None
activities = {}  # object path -> {field: value}
generation = 0  # bumped at each new owner or connection: replies to older asks are dropped
pending = False
last = None


def show():
    global pending, last
    pending = False
    shown = sorted(activities.values(), key=lambda a: a.get("id", 0))
    line = json.dumps({"owner": owner, "activities": shown}, sort_keys=True)
    if line != last:
        last = line
        print(line, flush=True)
    return False


def changed():
    global pending
    if not pending:
        pending = True
        GLib.idle_add(show)


def apply(path, properties):
    entry = activities.setdefault(path, {"id": 0, "label": "", "application": "", "claimed_application": "",
                                         "completed": 0, "total": 0, "fraction": -1.0})
    for key, value in properties.items():
        if key in FIELDS:
            entry[FIELDS[key]] = value


def follow(new_owner):
    """A new owner (or none): forget the old one's objects and ask the new one for its own."""
    global owner, generation
    owner = new_owner or None
    generation += 1
    activities.clear()
    changed()
    if owner:
        asked = generation
        connection.call(NAME, PATH, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", None,
                        GLib.VariantType("(a{oa{sa{sv}}})"), Gio.DBusCallFlags.NO_AUTO_START, -1, None,
                        managed_objects, asked)


def managed_objects(source, result, asked):
    try:
        (objects,) = source.call_finish(result).unpack()
    except GLib.Error:
        return
    if asked != generation:
        return
    activities.clear()
    for path, interfaces in objects.items():
        if ACTIVITY in interfaces:
            apply(path, interfaces[ACTIVITY])
    changed()


def owner_found(source, result, asked):
    try:
        (found,) = source.call_finish(result).unpack()
    except GLib.Error:
        found = None
    if asked == generation:
        follow(found)


def signal(_connection, sender, path, interface, member, parameters):
    if interface == "org.freedesktop.DBus" and member == "NameOwnerChanged":
        name, _, new_owner = parameters.unpack()
        if name == NAME:
            follow(new_owner)
        return
    if owner is None or sender != owner or not path.startswith(PATH):
        return
    if member == "InterfacesAdded":
        added, interfaces = parameters.unpack()
        if ACTIVITY in interfaces:
            apply(added, interfaces[ACTIVITY])
            changed()
    elif member == "InterfacesRemoved":
        removed, interfaces = parameters.unpack()
        if ACTIVITY in interfaces and activities.pop(removed, None) is not None:
            changed()
    elif member == "PropertiesChanged":
        name, properties, _ = parameters.unpack()
        if name == ACTIVITY and path in activities:
            apply(path, properties)
            changed()


def connect():
    global connection, generation
    try:
        connection = Gio.DBusConnection.new_for_address_sync(
            address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
    except GLib.Error:
        return True  # the bus is not back yet: try again
    # A closed bus must not end the process, as GLib's session singleton would.
    connection.set_exit_on_close(False)
    connection.connect("closed", lost)
    # One subscription, so every signal is handled in the order it came.
    connection.signal_subscribe(None, None, None, None, None, Gio.DBusSignalFlags.NONE, signal)
    generation += 1
    asked = generation
    connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                    GLib.Variant("(s)", (NAME,)), GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, -1, None,
                    owner_found, asked)
    return False


def lost(*_):
    global owner, generation
    owner = None
    generation += 1
    activities.clear()
    changed()
    GLib.timeout_add(200, connect)


if connect():
    GLib.timeout_add(200, connect)
loop.run()
