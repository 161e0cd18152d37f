import BusTestSupport
import DesktopApplications
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which application a systemd unit or cgroup is, by the names desktops give app units.
@Suite struct ApplicationUnitTests {
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
        #expect(Processes.parent(ofProcess: pid) == UInt32(getpid()))
        #expect(Processes.owner(ofProcess: pid) == getuid())
        #expect(Processes.parent(ofProcess: 0) == nil)
        #expect(Processes.owner(ofProcess: UInt32(Int32.max)) == nil, "no such process")
        if FileManager.default.fileExists(atPath: "/proc/self/cgroup"),
            let own = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8), own.hasPrefix("0::")
        {
            #expect(Processes.cgroup(ofProcess: pid) == Processes.cgroup(ofProcess: UInt32(getpid())))
        }
        #expect(Processes.application(ofProcess: pid) == "sleep", "no entry runs sleep, so its program's name")
        #expect(Processes.application(ofProcess: UInt32(Int32.max)) == nil)
    }
}

/// `/proc`-style files read whole, however long, up to the limit asked for.
@Suite struct ReadFileTests {
    @Test func filesAreReadWholeUpToTheLimit() throws {
        let path = NSTemporaryDirectory() + "netactivity-read-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = (0..<5_000).map { "line \($0)\n" }.joined()  // about 48 KiB: several doublings
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Processes.readFile(path, limit: 1 << 20) == Array(text.utf8))
        #expect(Processes.readFile(path, limit: 10_000) == Array(text.utf8.prefix(10_000)))
        #expect(Processes.readFile(path, limit: 5) == Array(text.utf8.prefix(5)))
        try "".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Processes.readFile(path, limit: 100) == nil, "empty")
        #expect(Processes.readFile(path + ".missing", limit: 100) == nil)
        #expect((Processes.readFile("/proc/self/status", limit: 1 << 20)?.count ?? 0) > 100, "a /proc file of no size")
    }
}
