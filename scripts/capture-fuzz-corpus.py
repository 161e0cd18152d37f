#!/usr/bin/python3
"""Captures the fuzz targets' seeds from this machine (docs/development.md#fuzzing).

    sudo scripts/capture-fuzz-corpus.py [Fuzz/corpus]

Real bytes, each written as Fuzz/corpus/TARGET/NAME:
- sock-diag: the kernel's answers to a TCP and a UDP dump, to a lookup by cookie and a TCP
  destroy broadcast, made on loopback sockets of its own (the broadcast needs root);
- interface-counters, procfs, app-unit: this machine's /proc files; unit-file: its unit files;
- desktop-entry: entries of /usr/share/applications;
- launcher-update, packagekit, dbus-message: every message on a private dbus-daemon, as
  `dbus-monitor --binary` records it, while libunity (through PyGObject) shows progress,
  a GDBus stand-in for packagekitd exports a transaction (packagekitd is a GDBus program too),
  and gdbus calls NetActivity's methods;
- plasma-jobs: the calls a KDE program's job tracker (KF6's KUiServerV2JobTracker, KF5's
  KUiServerJobTracker) makes on a job view server, made with gdbus on such a bus.

Run with Debian's /usr/bin/python3, which has PyGObject and libunity's typelib.
"""

import contextlib
import glob
import hashlib
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

CORPUS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Fuzz", "corpus")


def save(target, name, data):
    """Writes one seed; the same bytes twice are kept once."""
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:12]
    for existing in glob.glob(os.path.join(directory, "*")):
        with open(existing, "rb") as file:
            if file.read() == data:
                return
    with open(os.path.join(directory, f"{name}-{digest}"), "wb") as file:
        file.write(data)


# MARK: - sock_diag

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
INET_DIAG_INFO = 2
SKNLGRP_INET_TCP_DESTROY = 1
SOL_NETLINK, NETLINK_ADD_MEMBERSHIP = 270, 1


def diag_request(sequence, family, protocol, states, socket_id=None, dump=True):
    """nlmsghdr and inet_diag_req_v2, as the traffic source's InetDiagRequest lays them out."""
    sock_id = socket_id or bytes(48)
    body = struct.pack("=BBBBI", family, protocol, 1 << (INET_DIAG_INFO - 1), 0, states) + sock_id
    flags = NLM_F_REQUEST | (NLM_F_DUMP if dump else 0)
    return struct.pack("=IHHII", 16 + len(body), SOCK_DIAG_BY_FAMILY, flags, sequence, 0) + body


def exchange(request, dump=True):
    """The datagrams of the kernel's answer: a dump's up to NLMSG_DONE or an error, else one."""
    diag = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    diag.settimeout(2)
    diag.send(request)
    datagrams = []
    while True:
        datagram = diag.recv(65536)
        datagrams.append(datagram)
        kind = struct.unpack_from("=H", datagram, 4)[0]
        if kind in (2, 3) or not dump:
            break
    diag.close()
    return datagrams


def capture_sock_diag():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    listener6.bind(("::1", 0))
    listener6.listen()
    clients, servers = [], []
    for address, server in ((listener.getsockname(), listener), (listener6.getsockname(), listener6)):
        for _ in range(3):
            client = socket.create_connection(address[:2])
            client.sendall(b"x" * 5000)
            peer, _ = server.accept()
            peer.recv(65536)
            peer.sendall(b"y" * 3000)
            client.recv(65536)
            clients.append(client)
            servers.append(peer)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.connect(("127.0.0.1", 9))

    broadcasts = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    broadcasts.bind((0, 0))
    try:
        broadcasts.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, SKNLGRP_INET_TCP_DESTROY)
    except PermissionError:
        broadcasts = None

    sequence = 1
    for family, name in ((socket.AF_INET, "tcp4"), (socket.AF_INET6, "tcp6")):
        for index, datagram in enumerate(exchange(diag_request(sequence, family, 6, 0xFFFFFFFF))):
            save("sock-diag", f"dump-{name}-{index}", datagram)
            if index == 0:
                first = datagram
        sequence += 1
    for index, datagram in enumerate(exchange(diag_request(sequence, socket.AF_INET, 17, 0xFFFFFFFF))):
        save("sock-diag", f"dump-udp4-{index}", datagram)
    sequence += 1
    # A lookup of the first socket of the IPv6 dump by its id (ports, addresses, interface,
    # cookie), then of one that is gone: a socket, and an error.
    socket_id = first[16 + 4:16 + 4 + 48]
    save("sock-diag", "lookup-found", exchange(diag_request(sequence, socket.AF_INET6, 6, 0xFFFFFFFF, socket_id, dump=False), dump=False)[0])
    gone = socket_id[:40] + b"\xff" * 8
    save("sock-diag", "lookup-gone", exchange(diag_request(sequence + 1, socket.AF_INET6, 6, 0xFFFFFFFF, gone, dump=False), dump=False)[0])

    for client in clients + servers:
        client.close()
    if broadcasts:
        broadcasts.settimeout(1)
        for index in range(4):
            try:
                save("sock-diag", f"destroy-{index}", broadcasts.recv(65536))
            except socket.timeout:
                break


# MARK: - /proc and desktop entries

def read(path):
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return None


def capture_files():
    for name in ("dev", "route", "ipv6_route"):
        data = read(f"/proc/net/{name}")
        if data:
            save("interface-counters", name, data)
    for pid in ("self", "1"):
        for name in ("status", "cgroup", "cmdline", "mountinfo"):
            data = read(f"/proc/{pid}/{name}")
            if data:
                save("procfs", f"{name}-{pid}", data)
    cgroups = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        data = read(f"/proc/{pid}/cgroup")
        if data and data not in cgroups:
            cgroups.add(data)
            save("app-unit", "cgroup", data)
    # unit-file: a unit's name (an instance for a template), then its file.
    for name, file in (("apt-daily.service", "apt-daily.service"), ("getty@tty1.service", "getty@.service"),
                       ("packagekit.service", "packagekit.service"), ("systemd-timesyncd.service", "systemd-timesyncd.service")):
        data = read(f"/usr/lib/systemd/system/{file}")
        if data:
            save("unit-file", name, name.encode() + b"\n" + data)
    entries = sorted(glob.glob("/usr/share/applications/*.desktop"))
    for path in entries[:: max(1, len(entries) // 12)]:
        data = read(path)
        if data and len(data) < 16384:
            save("desktop-entry", os.path.basename(path).removesuffix(".desktop"), data)


# MARK: - D-Bus

PACKAGEKIT_SERVICE = r'''
import sys
from gi.repository import Gio, GLib
XML = """<node><interface name="org.freedesktop.PackageKit.Transaction">
<property name="Role" type="u" access="read"/><property name="Status" type="u" access="read"/>
<property name="Percentage" type="u" access="read"/><property name="DownloadSizeRemaining" type="t" access="read"/>
<property name="Sender" type="s" access="read"/><property name="LastPackage" type="s" access="read"/>
<property name="Uid" type="u" access="read"/><property name="AllowCancel" type="b" access="read"/>
<property name="TransactionFlags" type="t" access="read"/><property name="ElapsedTime" type="u" access="read"/>
<property name="RemainingTime" type="u" access="read"/><property name="Speed" type="u" access="read"/>
<signal name="Finished"><arg type="u"/><arg type="u"/></signal><signal name="Destroy"/>
</interface><interface name="org.freedesktop.PackageKit">
<signal name="TransactionListChanged"><arg type="as"/></signal></interface></node>"""
node = Gio.DBusNodeInfo.new_for_xml(XML)
bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
    Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
path = "/12_abcdef"
state = {"Role": GLib.Variant("u", 13), "Status": GLib.Variant("u", 2), "Percentage": GLib.Variant("u", 101),
         "DownloadSizeRemaining": GLib.Variant("t", 0), "Sender": GLib.Variant("s", bus.get_unique_name()),
         "LastPackage": GLib.Variant("s", ""), "Uid": GLib.Variant("u", 1000), "AllowCancel": GLib.Variant("b", True),
         "TransactionFlags": GLib.Variant("t", 0), "ElapsedTime": GLib.Variant("u", 0),
         "RemainingTime": GLib.Variant("u", 0), "Speed": GLib.Variant("u", 0)}
bus.register_object(path, node.interfaces[0], None, lambda *a: state[a[4]], None)
bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
    GLib.Variant("(su)", ("org.freedesktop.PackageKit", 4)), None, 0, -1, None)
def changed(**values):
    for key, value in values.items():
        state[key] = value
    bus.emit_signal(None, path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
        GLib.Variant("(sa{sv}as)", ("org.freedesktop.PackageKit.Transaction", values, [])))
    bus.flush_sync(None)
bus.emit_signal(None, "/org/freedesktop/PackageKit", "org.freedesktop.PackageKit", "TransactionListChanged",
    GLib.Variant("(as)", ([path],)))
def steps():
    changed(Status=GLib.Variant("u", 7), Percentage=GLib.Variant("u", 0))
    changed(Status=GLib.Variant("u", 8), DownloadSizeRemaining=GLib.Variant("t", 52428800), Speed=GLib.Variant("u", 1048576))
    changed(Percentage=GLib.Variant("u", 40), DownloadSizeRemaining=GLib.Variant("t", 31457280), ElapsedTime=GLib.Variant("u", 2500),
            LastPackage=GLib.Variant("s", "libc6;2.36-9+deb12u4;amd64;debian-security"))
    changed(Status=GLib.Variant("u", 18), Percentage=GLib.Variant("u", 100), DownloadSizeRemaining=GLib.Variant("t", 0))
    bus.emit_signal(None, path, "org.freedesktop.PackageKit.Transaction", "Finished", GLib.Variant("(uu)", (1, 5210)))
    bus.emit_signal(None, "/org/freedesktop/PackageKit", "org.freedesktop.PackageKit", "TransactionListChanged",
        GLib.Variant("(as)", ([],)))
    bus.emit_signal(None, path, "org.freedesktop.PackageKit.Transaction", "Destroy", None)
    bus.flush_sync(None)
    GLib.timeout_add(300, loop.quit)
    return False
loop = GLib.MainLoop()
GLib.timeout_add(1500, steps)
print("ready", flush=True)
loop.run()
'''

LAUNCHER = r'''
import sys
import gi
gi.require_version("Unity", "7.0")
from gi.repository import Gio, GLib, Unity
Gio.bus_own_name(Gio.BusType.SESSION, "com.canonical.Unity", 0, None, None, None)
entry = Unity.LauncherEntry.get_for_desktop_id("org.gnome.Nautilus.desktop")
loop = GLib.MainLoop()
def steps(values=[("progress", 0.25), ("progress_visible", True), ("count", 3), ("count_visible", True),
                  ("progress", 0.75), ("urgent", True), ("progress_visible", False)]):
    if not values:
        loop.quit()
        return False
    name, value = values.pop(0)
    entry.set_property(name, value)
    return True
GLib.timeout_add(400, steps)
loop.run()
'''


def capture_packagekitd():
    """Every PackageKit message while the real packagekitd (its dummy backend, as the bridge's
    tests run it: in a mount namespace of its own, python-dbusmock's polkitd allowing all)
    refreshes, lists updates and updates, for pkcon, on a private bus standing for the system bus."""
    if os.geteuid() != 0 or not os.path.exists("/usr/libexec/packagekitd") or not shutil.which("pkcon"):
        print("packagekitd: needs root, packagekit and packagekit-tools; its messages left out", file=sys.stderr)
        return
    state = tempfile.mkdtemp(prefix="fuzz-packagekitd-")
    for sub in ("lib", "cache", "home"):
        os.makedirs(os.path.join(state, sub))
    with recorded_bus() as (address, messages):
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address, GSETTINGS_BACKEND="memory", LANG="C",
                           HOME=os.path.join(state, "home"), XDG_CACHE_HOME=os.path.join(state, "home", ".cache"))
        started = [subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"],
                                    env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        time.sleep(3)
        subprocess.run(["gdbus", "call", "--system", "--dest", "org.freedesktop.PolicyKit1", "--object-path",
                        "/org/freedesktop/PolicyKit1/Authority", "--method", "org.freedesktop.DBus.Mock.AllowUnknown", "true"],
                       env=environment, capture_output=True)
        script = ('mount --bind "$1/lib" /var/lib/PackageKit && mount --bind "$1/cache" /var/cache/PackageKit '
                  '&& exec /usr/libexec/packagekitd --backend=dummy --disable-timer --keep-environment')
        started.append(subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", state],
                                        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(4)
        for arguments in (["refresh"], ["get-updates"], ["-y", "update"]):
            subprocess.run(["pkcon", "-p"] + arguments, env=environment, capture_output=True, timeout=60)
        for process in reversed(started):
            process.terminate()
            process.wait()
    shutil.rmtree(state)
    for index, message in enumerate(messages):
        if b"PackageKit" in message:
            save("packagekit", f"packagekitd-{index}", message)
            save("dbus-message", f"packagekitd-{index}", message)


@contextlib.contextmanager
def recorded_bus():
    """A private dbus-daemon and every message on it: yields its address and a list that holds
    the messages, as `dbus-monitor --pcap` recorded them, once the block has ended."""
    work = tempfile.mkdtemp(prefix="fuzz-corpus-")
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True)
    address = daemon.stdout.readline().strip()
    capture = os.path.join(work, "bus.pcap")
    messages = []
    with open(capture, "wb") as output:
        monitor = subprocess.Popen(["dbus-monitor", "--address", address, "--pcap"], stdout=output)
        time.sleep(0.5)
        try:
            yield address, messages
        finally:
            time.sleep(0.5)
            monitor.terminate()
            monitor.wait()
            daemon.terminate()
            daemon.wait()
    with open(capture, "rb") as file:
        messages += pcap_records(file.read())
    shutil.rmtree(work)


def pcap_records(data):
    """The packets of a pcap file: dbus-monitor --pcap writes each message whole."""
    offset = 24
    while offset + 16 <= len(data):
        length = struct.unpack_from("=I", data, offset + 8)[0]
        yield data[offset + 16:offset + 16 + length]
        offset += 16 + length


def capture_dbus():
    with recorded_bus() as (address, messages):
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        packagekit = subprocess.Popen(["/usr/bin/python3", "-c", PACKAGEKIT_SERVICE, address], stdout=subprocess.PIPE, text=True)
        packagekit.stdout.readline()
        subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.PackageKit", "--object-path", "/12_abcdef",
                        "--method", "org.freedesktop.DBus.Properties.GetAll", "org.freedesktop.PackageKit.Transaction"],
                       env=environment, capture_output=True)
        packagekit.wait(timeout=20)
        subprocess.run(["/usr/bin/python3", "-c", LAUNCHER], env=environment, timeout=20)
        emit = ["gdbus", "emit", "--session", "--object-path", "/", "--signal", "com.canonical.Unity.LauncherEntry.Update"]
        for arguments in (["'application://firefox-esr.desktop'", "{'progress': <0.5>, 'progress-visible': <true>}"],
                          ["'application://org.example.App.desktop'", "{'progress': <'half'>, 'count': <int64 3>}"]):
            subprocess.run(emit + arguments, env=environment, capture_output=True)
        # NetActivity's own methods as a GLib client calls them (the service is absent: the
        # calls and the bus's error replies are what is kept).
        call = ["gdbus", "call", "--session", "--timeout", "1", "--dest", "io.github.netactivity.NetActivity1",
                "--object-path", "/io/github/netactivity/NetActivity1", "--method"]
        for arguments in (["io.github.netactivity.NetActivity1.BeginActivity", "'Downloading report.pdf'"],
                          ["io.github.netactivity.NetActivity1.BeginActivityWithHints", "'Downloading report.pdf'",
                           "{'application': <'firefox-esr'>, 'icon': <'firefox-esr'>, 'kind': <'download'>}"],
                          ["io.github.netactivity.NetActivity1.UpdateActivity", "7", "1024", "4096"],
                          ["io.github.netactivity.NetActivity1.UpdateActivityFraction", "7", "0.5"],
                          ["io.github.netactivity.NetActivity1.EndActivity", "7"],
                          ["org.freedesktop.DBus.Properties.GetAll", "'io.github.netactivity.NetActivity1'"]):
            subprocess.run(call + arguments, env=environment, capture_output=True)
    for index, message in enumerate(messages):
        if b"com.canonical.Unity.LauncherEntry" in message:
            save("launcher-update", f"message-{index}", message)
        if b"PackageKit" in message or b"DownloadSizeRemaining" in message:
            save("packagekit", f"message-{index}", message)
        save("dbus-message", f"message-{index}", message)


def capture_plasma_jobs():
    """requestView, then each version 2 setter, version 3's update and terminate, as
    KUiServerV2JobTracker sends them (the server is absent: the calls are what is kept)."""
    with recorded_bus() as (address, messages):
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        call = ["gdbus", "call", "--session", "--timeout", "1", "--dest", "org.kde.JobViewServer"]
        server = call + ["--object-path", "/JobViewServer", "--method"]
        view = call + ["--object-path", "/org/kde/notificationmanager/jobs/JobView_1", "--method"]
        for arguments in (
            server + ["org.kde.JobViewServerV2.requestView", "'org.kde.dolphin'", "1",
                      "{'title': <'Copying'>, 'infoMessage': <'Copying'>, 'descriptionLabel1': <'Source'>, "
                      "'descriptionValue1': <'sftp://nas/backup/movie.mkv'>, 'totalBytes': <uint64 734003200>, "
                      "'application-display-name': <'Dolphin'>, 'application-icon-name': <'system-file-manager'>}"],
            server + ["org.kde.JobViewServer.requestView", "'kioclient'", "'kioclient'", "0"],
            view + ["org.kde.JobViewV2.setInfoMessage", "'Downloading'"],
            view + ["org.kde.JobViewV2.setDescriptionField", "0", "'Source'", "'https://example.org/files/report.pdf'"],
            view + ["org.kde.JobViewV2.setDescriptionField", "1", "'Destination'", "'/home/user/Downloads/report.pdf'"],
            view + ["org.kde.JobViewV2.clearDescriptionField", "1"],
            view + ["org.kde.JobViewV2.setTotalAmount", "734003200", "'bytes'"],
            view + ["org.kde.JobViewV2.setTotalAmount", "3", "'files'"],
            view + ["org.kde.JobViewV2.setProcessedAmount", "367001600", "'bytes'"],
            view + ["org.kde.JobViewV2.setPercent", "50"],
            view + ["org.kde.JobViewV2.setSpeed", "10485760"],
            view + ["org.kde.JobViewV2.setSuspended", "true"],
            view + ["org.kde.JobViewV2.setError", "1"],
            view + ["org.kde.JobViewV2.terminate", "'The file could not be written'"],
            view + ["org.kde.JobViewV3.update",
                    "{'title': <'Copying'>, 'processedBytes': <uint64 1048576>, 'totalBytes': <uint64 734003200>, "
                    "'percent': <uint32 1>, 'speed': <uint64 1048576>, 'suspended': <false>, "
                    "'descriptionLabel2': <'Destination'>, 'descriptionValue2': <'/home/user/movie.mkv'>}"],
            view + ["org.kde.JobViewV3.terminate", "0", "''", "{}"],
            view + ["org.kde.JobViewV3.terminate", "4", "'Could not connect to host nas'", "{'errorText': <'x'>}"],
        ):
            subprocess.run(arguments, env=environment, capture_output=True)
    for index, message in enumerate(messages):
        if b"org.kde." in message:
            save("plasma-jobs", f"kde-job-{index}", message)


if __name__ == "__main__":
    capture_sock_diag()
    capture_files()
    capture_dbus()
    capture_packagekitd()
    capture_plasma_jobs()
