#!/usr/bin/python3
"""Runs the extension in the real GNOME Shell, headless, and checks what it shows.

Run by tests/test-shell.sh inside `dbus-run-session` with a private HOME and XDG_RUNTIME_DIR
and a stand-in system bus in DBUS_SYSTEM_BUS_ADDRESS; see that script. The shell, both
netactivityd instances and the activities are real; screenshots come from
org.gnome.Shell.Screenshot and the menu's text from org.gnome.Shell.Eval (unsafe mode). The
same checks run in every GNOME Shell from 43 on, which runs with G_ENABLE_DIAGNOSTIC=1: at the
end its log must hold no line from the extension.

usage: shell_test.py --netactivityd PATH --work DIR [--images DIR] [--report-fd N]
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import unicodedata

import gi

gi.require_version("GdkPixbuf", "2.0")
from gi.repository import GdkPixbuf, Gio, GLib  # noqa: E402

UUID = "netactivity@netactivity.github.io"
SERVICE = "io.github.netactivity.NetActivity1"
SERVICE_PATH = "/io/github/netactivity/NetActivity1"
SHELL = "org.gnome.Shell"
# The desktop id the first download is for; the test installs its desktop entry.
BACKUP_APP = "org.example.PhotoBackup"
# The button, as the extension's enable() adds it to the panel under its uuid. Eval'd code
# runs in the scope of the shell's shellDBus.js, which has `Main` in every version: a legacy
# `const Main = imports.ui.main` in 43, an ES module's `import * as Main` from 45 on, where
# `imports.ui` no longer exists (`imports.gi` and `imports.system` still do).
BUTTON = f"Main.panel.statusArea['{UUID}']"


class Failure(Exception):
    pass


# The lines of the shell's log that come from the extension: every one naming its uuid (the
# shell's messages about it and each JS stack frame in its code, whose path holds the uuid),
# and the deprecations its own calls would set off, which GLib and GJS report without saying
# who called (GLib once per property, at its first use): St.BoxLayout's `vertical` and Gio's
# DesktopAppInfo, moved to GioUnix. Anything else is the shell's own, and not the test's.
EXTENSION_LINES = re.compile(re.escape(UUID) + r"|StBoxLayout:vertical|DesktopAppInfo")
# What G_ENABLE_DIAGNOSTIC=1 and GLib's log levels mark as worth a look.
WARNING_LINES = re.compile(r"WARNING|CRITICAL|ERROR|[Dd]eprecat")


# Where the report goes: the bus daemon's services inherit its stdout, so the wrapper gives
# this script a descriptor of its own (--report-fd).
report = sys.stdout


def say(line):
    print(line, file=report, flush=True)


def check(condition, what):
    if not condition:
        raise Failure(what)
    say(f"ok: {what}")


def wait_for(what, predicate, timeout=10.0, interval=0.05, show=None):
    """Polls `predicate` until it returns something true; fails naming `what` after `timeout`,
    with what `show` (if given) returns then."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except GLib.Error as error:
            value = None
            last = error
        else:
            last = None
        if value:
            return value
        if time.monotonic() > deadline:
            seen = f"; now: {show()!r}" if show else ""
            raise Failure(f"timed out after {timeout} s waiting for {what}" + (f" ({last.message})" if last else "")
                          + seen)
        time.sleep(interval)


# MARK: - The shell


class Shell:
    def __init__(self, bus):
        self.bus = bus

    def call(self, path, interface, method, args, reply, timeout=5000):
        return self.bus.call_sync(SHELL, path, interface, method, args, GLib.VariantType(reply),
                                  Gio.DBusCallFlags.NONE, timeout, None).unpack()

    def eval(self, code):
        """The JSON value of `code` evaluated in the shell; fails on an exception there."""
        success, result = self.call("/org/gnome/Shell", SHELL, "Eval", GLib.Variant("(s)", (code,)), "(bs)")
        if not success:
            raise Failure(f"Eval failed: {result}\n{code}")
        return json.loads(result) if result else None

    def screenshot(self, box, path):
        x, y, width, height = (int(round(v)) for v in box)
        success, _ = self.call("/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot", "ScreenshotArea",
                               GLib.Variant("(iiiibs)", (x, y, width, height, False, path)), "(bs)")
        if not success:
            raise Failure(f"no screenshot {os.path.basename(path)}")
        return path

    def extension_info(self):
        return self.call("/org/gnome/Shell", "org.gnome.Shell.Extensions", "GetExtensionInfo",
                         GLib.Variant("(s)", (UUID,)), "(a{sv})")[0]

    def extensions(self, method):
        self.call("/org/gnome/Shell", "org.gnome.Shell.Extensions", method, GLib.Variant("(s)", (UUID,)), "(b)")


def pixels(path):
    image = GdkPixbuf.Pixbuf.new_from_file(path)
    return image.get_width(), image.get_height(), image.get_pixels()


# MARK: - The services and activities


class Reporter:
    """One connection of its own to a bus, as an app's: its activities end when it closes."""

    def __init__(self, address, version):
        self.version = version
        self.connection = Gio.DBusConnection.new_for_address_sync(
            address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)

    def call(self, method, signature, args, reply=None):
        result = self.connection.call_sync(SERVICE, SERVICE_PATH, SERVICE, method, GLib.Variant(signature, args),
                                           GLib.VariantType(reply) if reply else None, Gio.DBusCallFlags.NONE,
                                           5000, None)
        return result.unpack() if reply else None

    def begin(self, label, hints=None):
        if self.version < 3:
            return self.call("BeginActivity", "(s)", (label,), "(u)")[0]
        return self.call("BeginActivityWithHints", "(sa{sv})", (label, hints or {}), "(u)")[0]

    def update(self, activity, completed, total):
        self.call("UpdateActivity", "(utt)", (activity, completed, total))

    def fraction(self, activity, fraction):
        self.call("UpdateActivityFraction", "(ud)", (activity, fraction))

    def close(self):
        self.connection.close_sync(None)


def start_service(netactivityd, log, *arguments):
    process = subprocess.Popen([netactivityd, *arguments], stdout=log, stderr=log)
    return process


def contract_version(bus):
    """The service's InterfaceVersion: 3, or 2 for a service from before it had one."""
    try:
        value = bus.call_sync(SERVICE, SERVICE_PATH, "org.freedesktop.DBus.Properties", "Get",
                              GLib.Variant("(ss)", (SERVICE, "InterfaceVersion")), GLib.VariantType("(v)"),
                              Gio.DBusCallFlags.NONE, 2000, None).unpack()[0]
    except GLib.Error:
        return 2
    return value


def has_owner(bus, name):
    return bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                         GLib.Variant("(s)", (name,)), GLib.VariantType("(b)"), Gio.DBusCallFlags.NONE, 2000,
                         None).unpack()[0]


def owner(bus, name):
    return bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                         GLib.Variant("(s)", (name,)), GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 2000,
                         None).unpack()[0]


def service_rules(bus, connection_name):
    """The match rules a connection holds that name the service (dbus-daemon's Debug.Stats)."""
    rules = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.Debug.Stats",
                          "GetAllMatchRules", None, GLib.VariantType("(a{sas})"), Gio.DBusCallFlags.NONE, 2000,
                          None).unpack()[0]
    return [rule for rule in rules.get(connection_name, []) if SERVICE in rule or SERVICE_PATH in rule]


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# MARK: - The test


def run(options):
    work = options.work
    session_address = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    system_address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
    session_bus = Gio.DBusConnection.new_for_address_sync(
        session_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    system_bus = Gio.DBusConnection.new_for_address_sync(
        system_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    netactivity = os.path.join(os.path.dirname(options.netactivityd), "netactivity")
    processes = []
    started = time.monotonic()

    # Before the shell starts, so it reads them at start-up.
    for schema, key, value in [
        ("org.gnome.shell", "enabled-extensions", f"['{UUID}']"),
        ("org.gnome.shell", "welcome-dialog-last-shown-version", "'99'"),
        ("org.gnome.desktop.notifications", "show-banners", "false"),
    ]:
        subprocess.run(["gsettings", "set", schema, key, value], check=True)

    service_log = open(os.path.join(work, "netactivityd.log"), "w")
    session_service = start_service(options.netactivityd, service_log)
    processes.append(session_service)
    system_service = start_service(options.netactivityd, service_log, "--system", "--address", system_address)
    processes.append(system_service)

    # An application with a desktop entry, which the menu names and draws by that entry.
    applications = os.path.join(GLib.get_user_data_dir(), "applications")
    os.makedirs(applications, exist_ok=True)
    with open(os.path.join(applications, f"{BACKUP_APP}.desktop"), "w") as entry:
        entry.write(f"[Desktop Entry]\nType=Application\nName=Photo Backup\nIcon={BACKUP_APP}\nExec=true\n")

    shell_log_path = os.path.join(work, "gnome-shell.log")
    shell_log = open(shell_log_path, "w")
    # Unsafe mode for Eval and for screenshots by any caller. Xwayland is not wanted; a shell
    # without X11 support has no --no-x11 to say so.
    command = ["gnome-shell", "--headless", "--wayland", "--virtual-monitor", "1280x800", "--unsafe-mode"]
    if "--no-x11" in subprocess.run(["gnome-shell", "--help"], capture_output=True, text=True).stdout:
        command.append("--no-x11")
    # G_ENABLE_DIAGNOSTIC=1 makes GLib warn of every deprecated property and signal used, and
    # GJS of deprecated API: the log must hold none from the extension (checked at the end).
    shell_process = subprocess.Popen(command, stdout=shell_log, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, G_ENABLE_DIAGNOSTIC="1"))
    processes.append(shell_process)
    try:
        shell = Shell(session_bus)
        wait_for("the services' names", lambda: has_owner(session_bus, SERVICE) and has_owner(system_bus, SERVICE))
        # The name appears before the shell's objects answer: retry until Eval does.
        wait_for("the shell's Eval", lambda: shell_process.poll() is None and shell.eval("true"), timeout=30)
        check(shell_process.poll() is None, "the shell runs")
        wait_for("the start-up animation's end", lambda: shell.eval("!Main.layoutManager._startingUp"),
                 timeout=30)
        session_bus.call_sync(SHELL, "/org/gnome/Shell", "org.freedesktop.DBus.Properties", "Set",
                              GLib.Variant("(ssv)", (SHELL, "OverviewActive", GLib.Variant("b", False))),
                              None, Gio.DBusCallFlags.NONE, 5000, None)
        wait_for("the overview hidden", lambda: shell.eval(
            "!Main.overview.visible && !Main.overview.animationInProgress"))
        say(f"shell up and the overview hidden after {time.monotonic() - started:.1f} s")

        info = wait_for("the extension enabled", lambda: (lambda i: i if i.get("state") == 1 else None)(
            shell.extension_info()))
        check(info.get("error", "") == "", f"GetExtensionInfo: enabled with no error ({info.get('error', '')!r})")

        # The top bar right of the clock (whose minutes would change the picture), where the
        # indicator sits.
        panel = shell.eval("(() => { const p = Main.panel; const [x, y] = p.get_transformed_position();"
                           " const [w, h] = p.get_transformed_size(); return [x, y, w, h]; })()")
        clock_end = shell.eval("(() => { const c = Main.panel.statusArea.dateMenu.container;"
                               " const [x] = c.get_transformed_position(); return x + c.get_transformed_size()[0]; })()")
        right = (clock_end, panel[1], panel[0] + panel[2] - clock_end, panel[3])
        check(shell.eval(f"{BUTTON} !== undefined && !{BUTTON}.visible"), "no indicator while idle")
        # The shell's own indicators (network, sound, privacy) settle in their own time, later on
        # a loaded machine: the idle picture is the one that holds still for a moment.
        last = [None]

        def steady():
            picture = pixels(shell.screenshot(right, os.path.join(work, "idle.png")))
            held, last[0] = picture == last[0], picture
            return held
        wait_for("the top bar to hold still while idle", steady, timeout=10, interval=0.3)
        idle = os.path.join(work, "idle.png")

        # MARK: An activity: hidden for the activation delay, then the ring.
        version = contract_version(session_bus)
        say(f"the service has contract version {version}")
        app = Reporter(session_address, version)
        total = 100 * 1024 * 1024
        # When the button shows, in the shell's own clock: CLOCK_MONOTONIC, as time.monotonic()
        # here, so a slow Eval on a loaded machine cannot blur the activation delay.
        shell.eval(f"globalThis.__netactivityShown = 0; globalThis.__netactivityShowing = {BUTTON}.connect("
                   "'notify::visible', b => { if (b.visible && !globalThis.__netactivityShown)"
                   " globalThis.__netactivityShown = imports.gi.GLib.get_monotonic_time(); }); true")
        began = time.monotonic()
        download = app.begin("Backup photos", {"application": GLib.Variant("s", BACKUP_APP),
                                               "kind": GLib.Variant("s", "download")})
        app.update(download, total // 4, total)
        shown = wait_for("the indicator", lambda: shell.eval("globalThis.__netactivityShown"), timeout=5) / 1e6
        shell.eval(f"{BUTTON}.disconnect(globalThis.__netactivityShowing); delete globalThis.__netactivityShowing;"
                   " delete globalThis.__netactivityShown; true")
        # The service's timers may round to the millisecond.
        check(shown - began >= 0.99, f"no indicator within the activation delay, then the indicator "
                                    f"({shown - began:.2f} s after the activity began)")
        wait_for("the ring at 25%", lambda: shell.eval(f"{BUTTON}._percent === 25 && {BUTTON}._ring.visible"))
        # Laid out once the frame after it became visible is drawn (NaN, as null, until then).
        ring = wait_for("the ring laid out", lambda: (lambda box: box if None not in box and box[2] > 0 else None)(
            shell.eval(f"(() => {{ const r = {BUTTON}._ring; const [x, y] = r.get_transformed_position();"
                       " const [w, h] = r.get_transformed_size(); return [x, y, w, h]; })()")))
        time.sleep(0.3)  # the frame after the repaint
        quarter = pixels(shell.screenshot(ring, os.path.join(work, "ring-25.png")))

        # Bytes moving over time: version 3's Rate, so the menu shows a rate and the time left.
        time.sleep(0.5)
        app.update(download, total * 3 // 4, total)
        wait_for("the ring at 75%", lambda: shell.eval(f"{BUTTON}._percent === 75"))
        # Until the frame with the new ring is on screen.
        wait_for("the ring's pixels to differ between 25% and 75%", lambda: (lambda b: b[:2] == quarter[:2]
                 and b[2] != quarter[2])(pixels(shell.screenshot(ring, os.path.join(work, "ring-75.png")))),
                 timeout=3, interval=0.1)
        say("ok: the ring's pixels differ between 25% and 75%")

        # MARK: The menu: the session's activity, the system's after it, the shared counter.
        system_app = Reporter(system_address, version)
        update = system_app.begin("System update", {"application": GLib.Variant("s", "org.debian.apt")})
        if version >= 3:
            system_app.fraction(update, 0.5)
        else:
            system_app.update(update, 50, 100)
        subprocess.run([netactivity, "push"], check=True, stdout=subprocess.DEVNULL)
        wait_for("the system's activity and the shared counter", lambda: shell.eval(
            f"{BUTTON}._sides.map(s => s.count).join(',') === '2,1'"))
        time.sleep(0.3)
        shell.eval(f"{BUTTON}.menu.open(false)")
        lines = wait_for("the menu's text", lambda: (lambda t: t if any("other connection" in x for x in t) else None)(
            shell.eval(f"{BUTTON}.menuText()")), show=lambda: shell.eval(f"{BUTTON}.menuText()"))
        say("menu: " + " | ".join(lines))
        text = "\n".join(lines)
        check("Backup photos" in text, "the menu shows the label")
        check(any(line.startswith("75%") for line in lines), "the menu shows the percent")
        if version >= 3:
            check(any("/s" in line and "left" in line for line in lines), "the menu shows the rate and time left")
        session_line = next(i for i, line in enumerate(lines) if "Backup photos" in line)
        system_line = next((i for i, line in enumerate(lines) if line.startswith("system: ")
                            and "System update" in line), None)
        check(system_line is not None and system_line > session_line, "the system's activity after the session's, marked")
        check("1 other connection" in text, "the shared counter")
        if version >= 3:
            check(lines[session_line].startswith("Photo Backup (via ") and lines[session_line].endswith(" — Backup photos"),
                  "the application by its desktop entry's name")
            icons = shell.eval(f"{BUTTON}.menuIcons()")
            say(f"menu icons: {icons}")
            check(len(icons) == 2 and BACKUP_APP in icons[0], "the session's row shows its application's icon")
            check("network-transmit-receive-symbolic" in icons[1],
                  "a row whose application has no desktop entry shows its kind's symbolic icon")
        # Count alone changes: the open menu follows.
        subprocess.run([netactivity, "push"], check=True, stdout=subprocess.DEVNULL)
        wait_for("the open menu with the new count", lambda: "2 other connections" in shell.eval(f"{BUTTON}.menuText()"),
                 show=lambda: shell.eval(f"{BUTTON}.menuText()"))
        subprocess.run([netactivity, "pop"], check=True, stdout=subprocess.DEVNULL)
        wait_for("the open menu with the count back", lambda: "1 other connection" in shell.eval(f"{BUTTON}.menuText()"))
        say("ok: the open menu follows the shared counter")

        # A label from any program on the bus: no control, bidirectional or other format
        # character reaches the menu (the rule docs/cli.md states for every output).
        hostile = Reporter(session_address, version)
        hostile.begin("\u009b31m\u001b]0;retitled\u0007 invoice\u202efdp.exe \u2066zero\u200bwidth")
        shown = wait_for("the hostile label in the open menu", lambda: next(
            (line for line in shell.eval(f"{BUTTON}.menuText()") if "invoice" in line), None))
        bad = [f"U+{ord(c):04X}" for c in shown if unicodedata.category(c) in ("Cc", "Cf", "Cn", "Zl", "Zp")]
        check(not bad and "?31m?]0;retitled? invoicefdp.exe zerowidth" in shown,
              f"the menu shows a hostile label printable ({shown!r}{', ' + ' '.join(bad) if bad else ''})")
        hostile.close()
        wait_for("the hostile label gone", lambda: not any("invoice" in line for line in shell.eval(f"{BUTTON}.menuText()")))

        screenshots = options.images
        if screenshots:
            os.makedirs(screenshots, exist_ok=True)
            menu = shell.eval(f"(() => {{ const m = {BUTTON}.menu.actor; const [x, y] = m.get_transformed_position();"
                              " const [w, h] = m.get_transformed_size(); return [x, y, w, h]; })()")
            left = max(0, min(menu[0], ring[0]) - 16)
            right_edge = min(panel[2], max(menu[0] + menu[2], ring[0] + ring[2]) + 16)
            shell.screenshot((left, 0, right_edge - left, menu[1] + menu[3] + 8),
                             os.path.join(screenshots, "gnome-menu.png"))
            shell.eval(f"{BUTTON}.menu.close(false)")
            time.sleep(0.3)
            shell.screenshot((panel[0] + panel[2] - 360, 0, 360, panel[3]), os.path.join(screenshots, "gnome-top-bar.png"))
        shell.eval(f"{BUTTON}.menu.close(false)")

        # MARK: Redrawn only for a new whole percent, at most 4 times a second.
        # The session's download alone from here, and the menu's closing (which restyles the
        # button, and so repaints the ring) over.
        subprocess.run([netactivity, "pop"], check=True, stdout=subprocess.DEVNULL)
        system_app.close()
        wait_for("the download alone", lambda: shell.eval(f"{BUTTON}._sides.map(s => s.count).join(',') === '1,0'"))
        time.sleep(0.5)
        shell.eval(f"globalThis.__netactivityRepaints = 0; globalThis.__netactivityRepaint = {BUTTON}._ring.connect("
                   "'repaint', () => { globalThis.__netactivityRepaints += 1; }); true")
        repaints = lambda: shell.eval("globalThis.__netactivityRepaints")
        for step in range(20):  # within 75 %
            app.update(download, total * 3 // 4 + step * total // 2000, total)
            time.sleep(0.025)
        time.sleep(0.4)
        check(repaints() == 0, f"no repaint while the whole percent stays ({repaints()})")
        burst = time.monotonic()
        for step in range(40):  # 76 % to 95 %, a new percent every 50 ms
            app.update(download, total * (76 + step // 2) // 100, total)
            time.sleep(0.025)
        wait_for("the ring at 95%", lambda: shell.eval(f"{BUTTON}._percent === 95"), timeout=3)
        drawn, seconds = repaints(), time.monotonic() - burst
        check(1 <= drawn <= int(seconds * 4) + 1, f"{drawn} repaints for 20 new percents in {seconds:.1f} s")
        shell.eval(f"{BUTTON}._ring.disconnect(globalThis.__netactivityRepaint); "
                   "delete globalThis.__netactivityRepaint; delete globalThis.__netactivityRepaints; true")

        # MARK: The end: nothing left in the top bar.
        app.close()
        wait_for("the indicator hidden", lambda: not shell.eval(f"{BUTTON}.visible"), timeout=5)
        idle_pixels = pixels(idle)
        wait_for("the top bar as while idle", lambda: pixels(shell.screenshot(right, os.path.join(work, "after.png")))
                 == idle_pixels, timeout=10, interval=0.1)
        say("ok: nothing in the top bar after the end (as while idle)")
        # A change within 250 ms of the last refresh leaves one timer for the rest of that time.
        wait_for("no timer left", lambda: shell.eval(f"{BUTTON}._ledger.sources.size === 0"), timeout=1)
        say("ok: no timer while nothing changes")

        # MARK: A restarted service is followed.
        stop(session_service)
        wait_for("the session service gone", lambda: not has_owner(session_bus, SERVICE))
        session_service = start_service(options.netactivityd, service_log)
        processes.append(session_service)
        wait_for("the session service back", lambda: has_owner(session_bus, SERVICE))
        again = Reporter(session_address, version)
        again.begin("After the restart")
        wait_for("the indicator for the restarted service", lambda: shell.eval(f"{BUTTON}.visible"), timeout=5)
        again.close()
        wait_for("the indicator hidden again", lambda: not shell.eval(f"{BUTTON}.visible"), timeout=5)
        say("ok: a restarted service is followed")

        # MARK: disable() leaves nothing behind.
        shell_name = owner(session_bus, SHELL)
        shell_on_system = shell.eval("(() => { const c = imports.gi.Gio.bus_get_sync("
                                     "imports.gi.Gio.BusType.SYSTEM, null); return c.get_unique_name(); })()")
        # What the ledger holds while enabled: every signal connection and source it made. An
        # actor destroyed takes its handlers with it, and asking a disposed object about them
        # only makes GJS complain in the log: such actors are noted as they go.
        held = shell.eval(f"(() => {{ const l = {BUTTON}._ledger; const gone = new Set();"
                          " new Set(l.signals.map(([o]) => o).filter(o => o instanceof imports.gi.Clutter.Actor))"
                          "   .forEach(o => o.connect('destroy', () => gone.add(o)));"
                          " globalThis.__netactivityHeld = {signals: l.signals.slice(), sources: [...l.sources], gone};"
                          " return l.signals.length; })()")
        check(held > 0, f"the ledger records the indicator's {held} signal connections")
        # The proxies' match rules go when they are finalized, so the garbage is collected first.
        def rules():
            shell.eval("imports.system.gc(); true")
            return service_rules(session_bus, shell_name) + service_rules(system_bus, shell_on_system)
        enabled_rules = rules()
        check(len(enabled_rules) > 0, f"the extension's {len(enabled_rules)} match rules for the service on both buses")
        shell.extensions("DisableExtension")
        wait_for("the extension disabled", lambda: shell.extension_info().get("state") != 1)
        left_behind = shell.eval(
            "(() => { const {GObject, GLib} = imports.gi; const h = globalThis.__netactivityHeld;"
            " delete globalThis.__netactivityHeld;"
            " const connected = ([o, id]) => o instanceof GObject.Object"
            "   ? GObject.signal_handler_is_connected(o, id) : o.signalHandlerIsConnected(id);"
            " const signals = h.signals.filter(([o]) => !h.gone.has(o)).filter(connected).length;"
            " const sources = h.sources.filter(id => GLib.MainContext.default().find_source_by_id(id) !== null).length;"
            " const actors = [];"
            " const walk = a => { if (a.has_style_class_name && (a.has_style_class_name('netactivity-indicator')"
            "   || a.has_style_class_name('netactivity-ring'))) actors.push(a); a.get_children().forEach(walk); };"
            " walk(global.stage);"
            f" return {{signals, sources, actors: actors.length, role: '{UUID}' in Main.panel.statusArea}};"
            " })()")
        check(left_behind == {"signals": 0, "sources": 0, "actors": 0, "role": False},
              f"disable() leaves no signal connection, source, actor or panel role ({left_behind})")
        wait_for("no match rule for the service left", lambda: rules() == [], show=rules)
        say("ok: disable() leaves no match rule for the service on either bus")
        shell.extensions("EnableExtension")
        wait_for("the extension enabled again", lambda: shell.extension_info().get("state") == 1)
        wait_for("the match rules back", lambda: sorted(rules()) == sorted(enabled_rules), show=rules)
        shell.extensions("DisableExtension")
        wait_for("the extension disabled again", lambda: shell.extension_info().get("state") != 1)
        wait_for("no match rule left after the second disable()", lambda: rules() == [], show=rules)
        say("ok: enabled again and disabled again, the same match rules come and go")
        check(shell_process.poll() is None, "the shell still runs")
    finally:
        for process in reversed(processes):
            stop(process)
        shell_log.close()
        service_log.close()

    # MARK: The log: nothing from the extension, all of it written by now.
    with open(shell_log_path, errors="replace") as file:
        lines = file.read().splitlines()
    ours = [line for line in lines if EXTENSION_LINES.search(line)]
    check(ours == [], "the shell's log (G_ENABLE_DIAGNOSTIC=1) holds no line from the extension"
          + "".join(f"\n  {line}" for line in ours))
    theirs = sum(1 for line in lines if WARNING_LINES.search(line))
    say(f"the shell's own warnings, not the extension's: {theirs} of its {len(lines)} log lines")
    say(f"all checks passed in {time.monotonic() - started:.1f} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--netactivityd", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--images")
    parser.add_argument("--report-fd", type=int)
    options = parser.parse_args()
    global report
    if options.report_fd is not None:
        report = os.fdopen(options.report_fd, "w")
    try:
        run(options)
    except (Failure, GLib.Error, TypeError, KeyError, ValueError) as failure:
        say(f"FAILED: {failure!r}")
        for log in ("gnome-shell.log", "netactivityd.log"):
            path = os.path.join(options.work, log)
            if os.path.exists(path):
                say(f"--- the last lines of {log}")
                with open(path, errors="replace") as file:
                    say("".join(file.readlines()[-30:]).rstrip("\n"))
        sys.exit(1)


if __name__ == "__main__":
    main()
