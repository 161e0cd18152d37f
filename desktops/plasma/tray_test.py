#!/usr/bin/env python3
"""netactivity tray in a real Plasma 6 session, run by desktops/plasma/test-tray.sh inside a
Debian root as the user `tester`, under dbus-run-session.

usage: tray_test.py PREFIX SCREENSHOTS

PREFIX holds bin/netactivityd, bin/netactivity and share/icons (the source tree's data/icons),
laid out as an installation is. SCREENSHOTS gets each settled picture of the panel as a PNG and
the programs' logs.

The session is plasma_session's (Xvfb, KWin, kded6, plasmashell), then netactivityd.
On each of Breeze (Plasma's default), Adwaita and hicolor alone (plasmashell
started again with kdeglobals' [Icons] Theme set to it):

- two control items first, each drawing the ring and then a theme icon: one whose icon no theme
  has gives the picture of a blank slot; network-transmit-receive, the tray's default before it
  had icons of its own, must look just as blank on Breeze and hicolor, and be drawn on Adwaita
  (which also shows that the theme is in effect);
- the watcher lists the tray's item, whose IconThemePath is PREFIX/share/icons;
- idle (Passive), the item is hidden: the panel looks as it did before the tray started;
- a transfer of unknown size shows the item's own icon: at least 80 pixels differ strongly from
  the blank slot's picture;
- at 75 % the ring replaces it: blue where the blank slot has none, and less of the ring's grey
  track than blue;
- when the transfer ends the item is hidden again: the panel is as it was while idle.

A change is waited for as a picture that stays the same and shows what the step looks for:
Plasma may draw an item's slot a moment before its icon.
"""
import os
import signal
import subprocess
import sys
import time

import plasma_session
from plasma_session import (BUS_NAME, WIDTH, Failure, get, log, owned, registered_items, running, service, start,
                            wait_until)

PREFIX, SCREENSHOTS = sys.argv[1], sys.argv[2]
plasma_session.LOGS = SCREENSHOTS
# The panel is at the top of the screen; the checks look at this band only.
PANEL_ROWS = 64
# The icon's disc and the ring's fill: Breeze's highlight blue, #3daee9.
BLUE = (61, 174, 233)
# The ring's track: 62 % grey at 90 % opacity over the dark rim.
GREY = (146, 146, 146)
# How often a changing panel is looked at. Each picture costs the X server and xwdtopnm some of
# the machine's two cores: 20 a second starved Plasma 6.7's animations (its tray's expander
# arrow stayed half faded), about 4 a second does not.
SCREENSHOT_INTERVAL = 0.25

ITEM_INTERFACE = "org.kde.StatusNotifierItem"


# MARK: - Pictures of the panel

class Picture:
    """The panel's band of the screen: PANEL_ROWS rows of RGB pixels."""

    def __init__(self, pixels):
        self.pixels = pixels

    def __eq__(self, other):
        return isinstance(other, Picture) and self.pixels == other.pixels

    def changed(self, other):
        """The pixels that differ from `other`: a list of (x, y)."""
        a, b = self.pixels, other.pixels
        return [(i // 3 % WIDTH, i // 3 // WIDTH) for i in range(0, len(a), 3) if a[i:i + 3] != b[i:i + 3]]

    def at(self, where):
        """The pixels at `where`, as (r, g, b)."""
        return [tuple(self.pixels[(y * WIDTH + x) * 3:(y * WIDTH + x) * 3 + 3]) for x, y in where]

    def near(self, colour, where, distance=40):
        """How many of the pixels at `where` are within `distance` of `colour`."""
        count = 0
        for x, y in where:
            i = (y * WIDTH + x) * 3
            r, g, b = self.pixels[i:i + 3]
            if (r - colour[0]) ** 2 + (g - colour[1]) ** 2 + (b - colour[2]) ** 2 <= distance ** 2:
                count += 1
        return count


def screenshot(name=None):
    """The panel now; kept as SCREENSHOTS/NAME.png when named."""
    picture = Picture(plasma_session.grab()[:WIDTH * PANEL_ROWS * 3])
    if name:
        keep(picture, name)
    return picture


def keep(picture, name):
    plasma_session.save_png(picture.pixels, PANEL_ROWS, f"{SCREENSHOTS}/{name}.png")


def settled(name, unlike=(), until=lambda picture: True, quiet=0.15, timeout=15.0):
    """Waits until the panel has drawn something new: a picture that stays the same for `quiet`
    seconds, differs from every one of `unlike` and shows what `until` looks for. Plasma may draw
    an item's slot before its icon, so a still picture alone is not the end of a change."""
    state = {"picture": None, "since": 0.0}

    def drawn():
        picture, now = screenshot(), time.monotonic()
        if picture != state["picture"]:
            state["picture"], state["since"] = picture, now
            return False
        return (now - state["since"] >= quiet and all(picture != earlier for earlier in unlike)
                and until(picture))

    try:
        wait_until(f"the panel to draw {name}", drawn, timeout, interval=SCREENSHOT_INTERVAL)
    finally:
        if state["picture"]:
            keep(state["picture"], name)
    return state["picture"]


# MARK: - The session

def start_session():
    """Starts the desktop and returns the picture of the screen before plasmashell drew."""
    bare = []
    plasma_session.start_session(before_plasmashell=lambda: bare.append(screenshot("bare")))
    return bare[0]


def start_service():
    daemon = start("netactivityd", [f"{PREFIX}/bin/netactivityd", "--throttle-ms", "0", "--activation-delay", "0.2",
                                    "--completion-delay", "0.1"])
    wait_until("netactivityd to own its name", lambda: running("netactivityd", daemon) and owned(BUS_NAME))


class Tray:
    """A running `netactivity tray` with `arguments`, once the watcher lists its item."""

    def __init__(self, name, arguments=()):
        self.name = name
        before = set(registered_items())
        self.process = start(name, [f"{PREFIX}/bin/netactivity", "tray", *arguments])
        item = wait_until(f"the watcher to list {name}'s item",
                          lambda: running(name, self.process) and set(registered_items()) - before)
        self.bus_name, _, path = item.pop().partition("/")
        self.path = "/" + path

    def get(self, prop):
        return get(self.bus_name, self.path, ITEM_INTERFACE, prop)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)
        wait_until(f"the watcher to drop {self.name}'s item",
                   lambda: not [i for i in registered_items() if i.startswith(self.bus_name + "/")])


def set_icon_theme(theme, panel):
    """Starts plasmashell again with the icon theme `theme`, as a session starts with the
    theme chosen in System Settings, and waits until it has drawn the panel seen in `panel`."""
    subprocess.run(["kwriteconfig6", "--file", "kdeglobals", "--group", "Icons", "--key", "Theme", theme], check=True)
    plasma_session.stop_plasmashell()
    plasma_session.start_plasmashell()
    # The panel's own background, away from the tray at its left end, as it was before.
    background = [(x, 30) for x in range(200, WIDTH - 200, 40)]
    wait_until(f"plasmashell to draw the panel with {theme}",
               lambda: strongly_changed(screenshot(), panel, background) == 0, interval=SCREENSHOT_INTERVAL)


# MARK: - The checks

def looks_idle(picture, idle):
    """Whether `picture` shows the panel as `idle` does: the same, but for at most the tray's
    expander arrow redrawn in place. Plasma 6.7 may place the arrow a fraction of a pixel
    elsewhere once an item has come and gone, which changes the shading of its edges; an item's
    slot, drawn or blank, moves the arrow by a whole slot, over 20 pixels."""
    changed = picture.changed(idle)
    if not changed:
        return True
    xs, ys = [x for x, _ in changed], [y for _, y in changed]
    return max(xs) - min(xs) < 16 and max(ys) - min(ys) < 16


def wait_hidden(what, idle, name):
    """Waits until the panel looks as it did while idle; keeps the last picture when it does not."""
    try:
        wait_until(what, lambda: looks_idle(screenshot(), idle), timeout=10, interval=SCREENSHOT_INTERVAL)
    except Failure:
        screenshot(name)
        raise


def strongly_changed(picture, other, where):
    """The pixels at `where` that differ from `other` by more than anti-aliasing does."""
    count = 0
    for x, y in where:
        i = (y * WIDTH + x) * 3
        if sum(abs(a - b) for a, b in zip(picture.pixels[i:i + 3], other.pixels[i:i + 3])) > 90:
            count += 1
    return count


def blue_where_changed(picture, reference):
    """How many of the pixels that differ from `reference` are the ring's blue."""
    return picture.near(BLUE, picture.changed(reference))


def control(theme, name, icon, idle):
    """The panel while the item of a tray showing the theme icon `icon` is Active. First a
    ring, which any theme draws, then `icon`: the picture that replaces the ring's is known to
    show `icon`, even where it looks as the idle panel does."""
    tray = Tray(f"tray-{name}", ["--icon", icon, "--idle-icon", icon])
    activity = service("BeginActivity", "(s)", ("Download",), "(u)")[0]
    service("UpdateActivity", "(utt)", (activity, 50, 100))
    wait_until(f"the {name} item to draw a ring", lambda: tray.get("Status") == "Active" and tray.get("IconName") == "")
    ring = settled(f"{theme}-{name}-ring", unlike=[idle], until=lambda p: blue_where_changed(p, idle) >= 20)
    service("UpdateActivity", "(utt)", (activity, 0, 0))
    wait_until(f"the {name} item to show {icon}", lambda: tray.get("IconName") == icon)
    picture = settled(f"{theme}-{name}", unlike=[ring], until=lambda p: blue_where_changed(p, idle) == 0)
    service("EndActivity", "(u)", (activity,))
    # Ours first, then Plasma's: a failure says which side kept the item.
    wait_until(f"the {name} item's Status Passive", lambda: tray.get("Status") == "Passive")
    wait_hidden(f"{theme}: the {name} item to be hidden", idle, f"{theme}-{name}-not-hidden")
    tray.stop()
    return picture


def check_theme(theme):
    # Every later picture is compared with this one: the panel at rest, after any fade.
    idle = settled(f"{theme}-idle", quiet=1.0)
    # The slot of an item whose icon no theme has: there, and empty.
    blank = control(theme, "blank-slot", "netactivity-test-no-such-icon", idle)
    # The tray's defaults before it had icons of its own: blank where the theme lacks them, as
    # on Breeze; Adwaita has them (as -symbolic), which shows that Plasma follows the switch.
    old = control(theme, "network-transmit-receive", "network-transmit-receive", idle)
    old_drawn = strongly_changed(old, blank, old.changed(blank))
    log(f"{theme}: network-transmit-receive: {old_drawn} pixels drawn where the blank slot has none")
    if (old_drawn >= 80) != (theme == "adwaita"):
        raise Failure(f"{theme}: network-transmit-receive is {'' if old_drawn >= 80 else 'not '}drawn: "
                      "is the icon theme in effect?")

    tray = Tray("tray")
    if tray.get("IconThemePath") != f"{PREFIX}/share/icons":
        raise Failure(f"IconThemePath is {tray.get('IconThemePath')!r}, not {PREFIX}/share/icons")
    wait_hidden(f"{theme}: the idle item to be hidden", idle, f"{theme}-idle-not-hidden")

    activity = service("BeginActivity", "(s)", ("Download",), "(u)")[0]
    wait_until("Status Active", lambda: tray.get("Status") == "Active")
    icon = tray.get("IconName")
    if icon != "io.github.netactivity.NetActivity-active":
        raise Failure(f"{theme}: IconName is {icon!r} while a transfer of unknown size runs")
    # Where the item's icon is drawn, the picture differs from the blank slot's: a 22-pixel
    # icon covers a few hundred pixels, the slot with a missing icon none.
    try:
        active = settled(f"{theme}-active", unlike=[idle],
                         until=lambda p: strongly_changed(p, blank, p.changed(blank)) >= 80)
    except Failure:
        raise Failure(f"{theme}: the slot of a transfer of unknown size shows no icon")
    log(f"{theme}: active: {strongly_changed(active, blank, active.changed(blank))} pixels drawn where the blank "
        "slot has none")

    service("UpdateActivity", "(utt)", (activity, 75, 100))
    wait_until("the ring", lambda: tray.get("IconName") == "")

    def measure(picture):
        slot = picture.changed(blank)
        return (strongly_changed(picture, blank, slot), picture.near(BLUE, slot),
                picture.near(GREY, slot, distance=30))

    def three_quarters(picture):
        drawn, blue, grey = measure(picture)
        # Three quarters of the ring blue, one quarter its grey track.
        return drawn >= 80 and blue >= 20 and grey >= 5 and blue > grey

    try:
        ring = settled(f"{theme}-ring-75", unlike=[idle, blank, active], until=three_quarters)
    except Failure:
        raise Failure(f"{theme}: the ring at 75 % is not drawn")
    drawn, blue, grey = measure(ring)
    log(f"{theme}: ring at 75 %: {drawn} pixels drawn, {blue} of them blue, {grey} grey")

    service("EndActivity", "(u)", (activity,))
    wait_until("Status Passive", lambda: tray.get("Status") == "Passive")
    wait_hidden(f"{theme}: the item to be hidden again", idle, f"{theme}-not-hidden")
    tray.stop()
    return idle


def main():
    os.makedirs(SCREENSHOTS, exist_ok=True)
    bare = start_session()
    # Plasma draws the wallpaper first and the panel later: Breeze's light grey, across the
    # band, where both Plasmas' default wallpapers are darker and coloured.
    background = [(x, 30) for x in range(200, WIDTH - 200, 40)]
    wait_until("plasmashell to draw the panel",
               lambda: all(min(pixel) >= 200 and max(pixel) - min(pixel) <= 25
                           for pixel in screenshot().at(background)), timeout=30, interval=SCREENSHOT_INTERVAL)
    settled("panel", unlike=[bare])
    log("the panel is drawn")
    start_service()
    panel = check_theme("breeze")
    for theme in ["Adwaita", "hicolor"]:
        set_icon_theme(theme, panel)
        log(f"plasmashell started again with the icon theme {theme}")
        check_theme(theme.lower())
    log("passed")


if __name__ == "__main__":
    plasma_session.run(main)
