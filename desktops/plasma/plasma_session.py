"""A Plasma 6 session on Xvfb, shared by the Plasma checks beside this module (tray_test.py,
jobs_test.py), which desktops/plasma/test-tray.sh runs inside a Debian root as the user
`tester`, under dbus-run-session.

The session: Xvfb, KWin nested on it as a Wayland compositor (no GPU here, so it composites with
QPainter, and pictures are grabbed from Xvfb with xwd), kded6 (whose module owns
org.kde.StatusNotifierWatcher) and plasmashell with one panel along the top holding the system
tray alone (with it the notifications applet, whose job list owns org.kde.JobViewServer).
Every program's output goes to LOGS/NAME.log.
"""
import os
import signal
import subprocess
import sys
import time

from gi.repository import Gio, GLib

DISPLAY_NUMBER = 9
WIDTH, HEIGHT = 1024, 600

WATCHER = "org.kde.StatusNotifierWatcher"
BUS_NAME = "io.github.netactivity.NetActivity1"
SERVICE_PATH = "/io/github/netactivity/NetActivity1"

started = time.monotonic()
children = []
# Where start() writes each program's log; set by the check that uses the session.
LOGS = "."


class Failure(Exception):
    pass


def log(message):
    print(f"plasma [{time.monotonic() - started:5.1f} s] {message}", flush=True)


def wait_until(what, condition, timeout=20.0, interval=0.05):
    """Polls `condition` until it returns a true value, which it returns; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except GLib.Error:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def start(name, argv, **environment):
    """Starts a program with its output in LOGS/NAME.log."""
    output = open(f"{LOGS}/{name}.log", "w")
    process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, **environment})
    children.append((name, process))
    return process


def running(name, process):
    if process.poll() is not None:
        with open(f"{LOGS}/{name}.log") as output:
            raise Failure(f"{name} exited with status {process.returncode}:\n{output.read()[-3000:]}")
    return True


def run(main):
    """Runs a check's `main`, says whether it failed, ends every program it started and exits
    with 0 or 1."""
    status = 0
    try:
        main()
    except Failure as failure:
        log(f"FAILED: {failure}")
        status = 1
    finally:
        stop_all()
    sys.exit(status)


def stop_all():
    """Ends every program started, the last first."""
    for name, process in reversed(children):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for name, process in reversed(children):
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


# MARK: - D-Bus

bus = Gio.bus_get_sync(Gio.BusType.SESSION)


def call(name, path, interface, method, arguments=None, reply="()"):
    result = bus.call_sync(name, path, interface, method, arguments, GLib.VariantType(reply),
                           Gio.DBusCallFlags.NONE, 10000)
    return result.unpack()


def owned(name):
    return call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                GLib.Variant("(s)", (name,)), "(b)")[0]


def get(name, path, interface, prop):
    return call(name, path, "org.freedesktop.DBus.Properties", "Get",
                GLib.Variant("(ss)", (interface, prop)), "(v)")[0]


def service(method, signature=None, values=None, reply="()"):
    """Calls `method` of netactivityd's main object."""
    arguments = GLib.Variant(signature, values) if signature else None
    return call(BUS_NAME, SERVICE_PATH, BUS_NAME, method, arguments, reply)


def registered_items():
    return get(WATCHER, "/StatusNotifierWatcher", WATCHER, "RegisteredStatusNotifierItems")


# MARK: - The screen

def grab():
    """The whole screen now, as RGB bytes, WIDTH × HEIGHT."""
    dump = subprocess.run(["xwd", "-root", "-silent", "-display", f":{DISPLAY_NUMBER}"], capture_output=True,
                          check=True).stdout
    ppm = subprocess.run(["xwdtopnm"], input=dump, capture_output=True, check=True).stdout
    # P6, width, height, maxval 255, then the RGB bytes.
    fields = ppm.split(maxsplit=4)
    if fields[0] != b"P6" or int(fields[1]) != WIDTH or int(fields[3]) != 255:
        raise Failure(f"xwdtopnm wrote an unexpected picture: {ppm[:20]!r}")
    return fields[4][:WIDTH * HEIGHT * 3]


def save_png(pixels, rows, path):
    """Writes `rows` rows of RGB `pixels` (WIDTH wide) to `path` as a PNG."""
    picture = b"P6\n%d %d\n255\n" % (WIDTH, rows) + pixels[:WIDTH * rows * 3]
    with open(path, "wb") as png:
        subprocess.run(["pnmtopng"], input=picture, stdout=png, stderr=subprocess.DEVNULL, check=True)


# MARK: - The session

shell = None


def start_session(before_plasmashell=lambda: None):
    """Starts the desktop; `before_plasmashell` runs once kded6's watcher answers, before
    plasmashell starts (the tray check takes its picture of the bare screen there)."""
    x11 = start("xvfb", ["Xvfb", f":{DISPLAY_NUMBER}", "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp"])
    wait_until("Xvfb", lambda: running("xvfb", x11) and os.path.exists(f"/tmp/.X11-unix/X{DISPLAY_NUMBER}"))
    runtime = os.environ["XDG_RUNTIME_DIR"]
    # No GPU: KWin composites with QPainter into a window on Xvfb, and Qt Quick draws in software.
    kwin = start("kwin", ["kwin_wayland", "--x11-display", f":{DISPLAY_NUMBER}", "--socket", "wayland-netactivity",
                          "--width", str(WIDTH), "--height", str(HEIGHT), "--no-lockscreen",
                          "--no-global-shortcuts"], KWIN_COMPOSE="Q", DISPLAY=f":{DISPLAY_NUMBER}")
    wait_until("KWin's Wayland socket",
               lambda: running("kwin", kwin) and os.path.exists(f"{runtime}/wayland-netactivity"))
    session = {"WAYLAND_DISPLAY": "wayland-netactivity", "QT_QPA_PLATFORM": "wayland",
               "QT_QUICK_BACKEND": "software", "XDG_SESSION_TYPE": "wayland", "XDG_CURRENT_DESKTOP": "KDE",
               "KDE_FULL_SESSION": "true", "KDE_SESSION_VERSION": "6"}
    os.environ.update(session)
    # Programs D-Bus starts (kactivitymanagerd, which plasmashell needs) must find the compositor
    # too, or they try X11 and plasmashell aborts.
    subprocess.run(["dbus-update-activation-environment", *session.keys()], check=True)
    # plasmashell places its panels on the screens KWin tells it of over D-Bus.
    wait_until("KWin on the session bus", lambda: running("kwin", kwin) and owned("org.kde.KWin"))
    kded = start("kded6", ["kded6"])
    # kded6 owns the watcher's name from the start, but loads the module behind it when Plasma's
    # system tray asks: ask now, so that the watcher answers before plasmashell is up.
    wait_until("kded6", lambda: running("kded6", kded) and owned("org.kde.kded6"))
    call("org.kde.kded6", "/kded", "org.kde.kded6", "loadModule", GLib.Variant("(s)", ("statusnotifierwatcher",)), "(b)")
    wait_until("kded6's StatusNotifierWatcher", lambda: running("kded6", kded) and registered_items() is not None)
    before_plasmashell()
    start_plasmashell()
    # One panel along the top with the system tray alone: no clock or task bar changes the picture.
    call("org.kde.plasmashell", "/PlasmaShell", "org.kde.PlasmaShell", "evaluateScript", GLib.Variant("(s)", ("""
        panels().forEach(function (panel) { panel.remove(); });
        var panel = new Panel("org.kde.panel");
        panel.location = "top";
        panel.height = 44;
        panel.addWidget("org.kde.plasma.systemtray");
    """,)), "(s)")


def start_plasmashell():
    """Starts plasmashell (kept in `shell`) and waits until it answers scripts."""
    global shell
    shell = start("plasmashell", ["plasmashell", "--no-respawn"])
    wait_until("plasmashell's scripting interface",
               lambda: running("plasmashell", shell) and owned("org.kde.plasmashell"), timeout=40)


def stop_plasmashell():
    """Ends plasmashell and waits until it has left the bus."""
    shell.send_signal(signal.SIGTERM)
    shell.wait(timeout=20)
    wait_until("plasmashell to leave the bus", lambda: not owned("org.kde.plasmashell"))
