import BusTestSupport
import DesktopApplications
import Platform
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which application a systemd unit or cgroup is, by the names desktops give app units.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ApplicationUnitTests {
    @Test(arguments: [
        ("app-gnome-org.gnome.Nautilus-1234.scope", "org.gnome.Nautilus"),
        ("app-org.gnome.Nautilus-1234.scope", "org.gnome.Nautilus"),
        ("app-flatpak-org.mozilla.firefox-5678.scope", "org.mozilla.firefox"),
        (#"app-gnome-firefox\x2desr-4242.scope"#, "firefox-esr"),
        ("app-gnome-org.gnome.Nautilus@12ab.service", "org.gnome.Nautilus"),
        ("app-KDE-org.kde.dolphin@0.service", "org.kde.dolphin"),
        ("app-org.example.Fetcher.service", "org.example.Fetcher"),
        (#"app-gnome-google\x2dchrome-99.scope"#, "google-chrome"),
    ])
    func appUnitsNameTheirApplication(unit: String, id: String) {
        #expect(ApplicationUnit.desktopID(ofUnit: unit) == id)
    }

    @Test(arguments: [
        "", "app-", "app-.scope", "app-1234.scope", "session-2.scope", "vte-spawn-1b2c.scope", "app.slice",
        "app-gnome-org.gnome.Nautilus.slice", "app-a-b-c-1.scope", "app-gnome-org.gnome.Nautilus-.scope",
        #"app-gnome-bad\x2-1.scope"#, #"app-gnome-bad\xzz-1.scope"#, #"app-gnome-slash\x2fpath-1.scope"#,
        #"app-gnome-\xff\xfe-1.scope"#, "app-gnome-" + String(repeating: "x", count: 600) + "-1.scope",
        "app-gnome-evil\u{1B}[31m-1.scope", "dbus-:1.2-org.gnome.Nautilus@0.service",
    ])
    func otherUnitsNameNone(unit: String) {
        #expect(ApplicationUnit.desktopID(ofUnit: unit) == nil)
    }

    @Test func aCgroupIsNamedByItsInnermostAppUnit() {
        let path = #"/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox\x2desr-4242.scope"#
        #expect(ApplicationUnit.desktopID(inCgroup: path) == "firefox-esr")
        #expect(ApplicationUnit.desktopID(inCgroup: "/user.slice/user-1000.slice/session-2.scope") == nil)
        #expect(ApplicationUnit.desktopID(inCgroup: "/") == nil)
        #expect(ApplicationUnit.desktopID(inCgroup: "") == nil)
    }

    @Test func processesTellTheirParentOwnerAndCgroup() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        defer {
            child.send(signal: SIGKILL)
            _ = try? child.waitForExit(timeout: .seconds(5))
        }
        let pid = UInt32(child.pid)
        #expect(Processes().parent(ofProcess: pid) == UInt32(getpid()))
        #expect(Processes().owner(ofProcess: pid) == getuid())
        #expect(Processes().parent(ofProcess: 0) == nil)
        #expect(Processes().owner(ofProcess: UInt32(Int32.max)) == nil, "no such process")
        if FileManager.default.fileExists(atPath: "/proc/self/cgroup"),
            let own = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8), own.hasPrefix("0::")
        {
            #expect(Processes().cgroup(ofProcess: pid) == Processes().cgroup(ofProcess: UInt32(getpid())))
        }
        #expect(Processes().application(ofProcess: pid) == "sleep", "no entry runs sleep, so its program's name")
        #expect(Processes().application(ofProcess: UInt32(Int32.max)) == nil)
    }
}

/// `Processes` reads the `ProcFS` it is given: a made-up `/proc` names an application as the
/// real one would.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ProcessesInATreeTests {
    @Test func aProcessInAnAppScopeIsItsDesktopApplication() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/4242"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "Name:\tfirefox-esr\nPPid:\t1000\nUid:\t1000\t1000\t1000\t1000\n".write(
            toFile: directory + "/status", atomically: false, encoding: .utf8)
        try "0::/user.slice/user-1000.slice/app-gnome-firefox\\x2desr-4242.scope\n".write(
            toFile: directory + "/cgroup", atomically: false, encoding: .utf8)
        try "/usr/lib/firefox-esr/firefox-esr\0--new-window\0".write(
            toFile: directory + "/cmdline", atomically: false, encoding: .utf8)
        let processes = Processes(proc: ProcFS(root: root))
        #expect(processes.programName(ofProcess: 4242) == "firefox-esr")
        #expect(processes.parent(ofProcess: 4242) == 1000)
        #expect(processes.owner(ofProcess: 4242) == 1000)
        #expect(processes.cgroup(ofProcess: 4242) == "/user.slice/user-1000.slice/app-gnome-firefox\\x2desr-4242.scope")
        #expect(processes.desktopApplication(ofProcess: 4242) == "firefox-esr")
        #expect(processes.application(ofProcess: 4242) == "firefox-esr")
        #expect(processes.application(ofProcess: 4243) == nil, "no such process in the tree")
    }
}
