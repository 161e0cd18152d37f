# A KDE program's file jobs, reported to the desktop's job view server as KDE Frameworks 6's
# KUiServerV2JobTracker reports a KJob's (kjobwidgets, src/kuiserverv2jobtracker.cpp), in Gio
# from PyGObject:
#
# - a job is registered, and its view asked for after the tracker's delay (a job that ends
#   sooner is never shown): org.kde.JobViewServerV2.requestView(desktopEntry, capabilities,
#   hints) on org.kde.JobViewServer at /JobViewServer, the hints being the job's whole state so
#   far plus "immediate";
# - once the view's path comes back, its whole state again in one org.kde.JobViewV3.update,
#   then only what changed, coalesced in an idle callback (the tracker's zero-interval timer);
# - at its end org.kde.JobViewV3.terminate(errorCode, errorMessage, hints), at once if the
#   view is there, else once it arrives;
# - when org.kde.JobViewServer gets a new owner (the bridge killed and started again), every
#   live job asks for a new view after the delay and sends its whole state again; while the
#   name has no owner the calls fail, and nothing else is done, as the tracker does nothing on
#   serverUnregistered. A view request that fails loses the job's view for good, as the
#   tracker forgets the job then.
#
# The calls go to the well-known name, not to its owner, as the tracker's proxies make them.
#
# Usage: /usr/bin/python3 kde-job-client.py ADDRESS DESKTOP_ENTRY
#
# Its first job copies a large file, its bytes growing steadily, and runs until the program
# ends; it begins once org.kde.JobViewServer has an owner, as a program started in a session
# whose job server is up. SIGUSR1 begins a short job that moves a file to the end, SIGUSR2 one
# that fails halfway. SIGTERM ends the program the way a KDE program quits: its jobs are killed
# and their views terminated. When its bus connection closes it exits 1, as a program whose
# session bus went away is of no more use to it.
#
# It prints `job N viewed PATH` when a job's view arrives, `job N ended CODE` when its
# terminate was sent (or it ended without a view), `job N lost` when a view request failed.
import signal
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

SERVER = "org.kde.JobViewServer"
SERVER_PATH = "/JobViewServer"
SERVER_V2 = "org.kde.JobViewServerV2"
VIEW_V3 = "org.kde.JobViewV3"
# KJob::Killable | KJob::Suspendable, as KIO's copy jobs have.
CAPABILITIES = 3
# KUiServerV2JobTracker's delay before it asks for a view, in milliseconds.
VIEW_DELAY = 500
# How often a job's bytes grow, in milliseconds.
TICK = 500
# KJob::KilledJobError, the error of a job killed as its program quits.
KILLED = 1
# KIO::ERR_CANNOT_WRITE.
CANNOT_WRITE = 12

address, desktop_entry = sys.argv[1], sys.argv[2]
loop = GLib.MainLoop()
status = 0
connection = None
jobs = {}  # number -> Job
updating = False  # an idle callback is to send the pending updates
copying = False  # the first job began
moves = 0  # short jobs begun


class Job:
    def __init__(self, number, title, source, destination, total, step, fails_at=None):
        self.number = number
        self.total = total
        self.step = step
        self.processed = 0
        self.fails_at = fails_at
        self.state = {}  # the tracker's currentState: key -> GLib.Variant
        self.pending = {}  # what changed since the last update
        self.path = None  # the view, once requestView answered
        self.asked = 0  # bumped at each request: an older answer is dropped
        self.delay = None  # the source of the delay before the request
        self.ended = None  # (code, message) once the job ended without a view to terminate
        self.ticker = None
        # KUiServerV2JobTracker::description, then totalAmount, then updateDestUrl.
        self.change("title", GLib.Variant("s", title))
        self.change("descriptionLabel1", GLib.Variant("s", "Source"))
        self.change("descriptionValue1", GLib.Variant("s", source))
        self.change("descriptionLabel2", GLib.Variant("s", "Destination"))
        self.change("descriptionValue2", GLib.Variant("s", destination))
        self.change("totalBytes", GLib.Variant("t", total))
        self.change("destUrl", GLib.Variant("s", destination))

    def change(self, key, value):
        """KUiServerV2JobTrackerPrivate::scheduleUpdate."""
        global updating
        self.state[key] = value
        self.pending[key] = value
        if not updating:
            updating = True
            GLib.idle_add(send_all_updates)

    def register(self):
        """KUiServerV2JobTracker::registerJob, with its delay."""
        self.path = None
        self.asked += 1
        if self.delay is not None:
            GLib.source_remove(self.delay)
        self.delay = GLib.timeout_add(VIEW_DELAY, self.request_view)

    def request_view(self):
        self.delay = None
        hints = dict(self.state)
        hints["immediate"] = GLib.Variant("b", True)
        asked = self.asked
        connection.call(SERVER, SERVER_PATH, SERVER_V2, "requestView",
                        GLib.Variant("(sia{sv})", (desktop_entry, CAPABILITIES, hints)), GLib.VariantType("(o)"),
                        Gio.DBusCallFlags.NONE, -1, None, self.viewed, asked)
        return False

    def viewed(self, source, result, asked):
        try:
            (path,) = source.call_finish(result).unpack()
        except GLib.Error as error:
            if asked == self.asked:
                print("job %d lost: %s" % (self.number, error.message), file=sys.stderr, flush=True)
                print("job %d lost" % self.number, flush=True)
                self.forget()
            return
        if asked != self.asked or self.number not in jobs:
            return
        self.path = path
        print("job %d viewed %s" % (self.number, path), flush=True)
        # The whole state, which holds every pending update.
        call(path, VIEW_V3, "update", GLib.Variant("(a{sv})", (self.state,)))
        self.pending = {}
        if self.ended is not None:
            self.terminate(*self.ended)

    def send_update(self):
        if self.path is None or not self.pending:
            return
        call(self.path, VIEW_V3, "update", GLib.Variant("(a{sv})", (self.pending,)))
        self.pending = {}

    def start(self):
        self.register()
        self.ticker = GLib.timeout_add(TICK, self.tick)

    def tick(self):
        self.processed = min(self.total, self.processed + self.step)
        self.change("processedBytes", GLib.Variant("t", self.processed))
        self.change("speed", GLib.Variant("t", self.step * 1000 // TICK))
        self.change("percent", GLib.Variant("u", self.processed * 100 // self.total))
        if self.fails_at is not None and self.processed >= self.fails_at:
            self.finish(CANNOT_WRITE, "Could not write to the destination.")
            return False
        if self.processed >= self.total:
            self.finish(0, "")
            return False
        return True

    def finish(self, code, message):
        """KUiServerV2JobTracker::finished."""
        if self.ticker is not None:
            GLib.source_remove(self.ticker)
            self.ticker = None
        self.send_update()
        if self.delay is not None:
            # Never shown: the view was still to be asked for.
            self.forget(code)
        elif self.path is not None:
            self.terminate(code, message)
        else:
            self.ended = (code, message)
            self.change("terminated", GLib.Variant("b", True))
            if code:
                self.change("errorCode", GLib.Variant("u", code))
                self.change("errorMessage", GLib.Variant("s", message))

    def terminate(self, code, message):
        call(self.path, VIEW_V3, "terminate", GLib.Variant("(usa{sv})", (code, message, {})))
        self.forget(code)

    def forget(self, code=None):
        if self.delay is not None:
            GLib.source_remove(self.delay)
            self.delay = None
        if self.ticker is not None:
            GLib.source_remove(self.ticker)
            self.ticker = None
        jobs.pop(self.number, None)
        if code is not None:
            print("job %d ended %d" % (self.number, code), flush=True)


def call(path, interface, member, parameters):
    """An asynchronous call whose failure is ignored, as the tracker ignores its calls' replies."""
    connection.call(SERVER, path, interface, member, parameters, None, Gio.DBusCallFlags.NONE, -1, None,
                    ignored, None)


def ignored(source, result, _):
    try:
        source.call_finish(result)
    except GLib.Error:
        pass


def send_all_updates():
    global updating
    updating = False
    for job in list(jobs.values()):
        job.send_update()
    return False


def begin(job):
    jobs[job.number] = job
    job.start()


def begin_copy():
    """The first job: about a mebibyte a second of a file far larger than any run copies."""
    global copying
    if not copying:
        copying = True
        begin(Job(0, "Copying", "smb://nas/images/stack.iso", "file:///home/user/stack.iso", 64 << 30, 512 << 10))


def begin_move(fails):
    """A short job: a few mebibytes moved in seconds, or failing halfway."""
    global moves
    moves += 1
    size = 4 << 20
    begin(Job(moves, "Moving", "file:///home/user/Inbox/kjob-%d.bin" % moves,
              "file:///home/user/Archive/kjob-%d.bin" % moves, size, 512 << 10, size // 2 if fails else None))
    return True


def owner_changed(_connection, _sender, _path, _interface, _member, parameters):
    """KSharedUiServerV2Proxy::uiserverOwnerChanged, then the tracker's serverRegistered."""
    name, _, new_owner = parameters.unpack()
    if name != SERVER or not new_owner:
        return
    if not copying:
        begin_copy()
        return
    for job in list(jobs.values()):
        if job.ended is None:
            job.register()
        elif job.path is not None:
            job.terminate(*job.ended)
        else:
            job.forget(job.ended[0])


def owner_found(source, result, _):
    try:
        source.call_finish(result)
    except GLib.Error:
        return  # no owner yet: the first job begins when one comes
    begin_copy()


def closed(*_):
    global status
    print("the bus connection closed", file=sys.stderr, flush=True)
    status = 1
    loop.quit()


def quit_program():
    """A KDE program quitting kills its jobs; each one's view is terminated."""
    for job in list(jobs.values()):
        job.finish(KILLED, "")
    connection.flush_sync(None)
    loop.quit()
    return False


try:
    connection = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
except GLib.Error as error:
    sys.exit("cannot connect to %s: %s" % (address, error.message))
connection.set_exit_on_close(False)
connection.connect("closed", closed)
connection.signal_subscribe("org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged", "/org/freedesktop/DBus",
                            SERVER, Gio.DBusSignalFlags.NONE, owner_changed)
connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                GLib.Variant("(s)", (SERVER,)), GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, -1, None,
                owner_found, None)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: begin_move(False))
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2, lambda: begin_move(True))
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, quit_program)
loop.run()
sys.exit(status)
