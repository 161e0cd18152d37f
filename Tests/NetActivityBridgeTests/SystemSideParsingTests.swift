import BusTestSupport
import Foundation
import NetActivity
@testable import NetActivityBridge
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where systemd placed a socket's cgroup, whose it is on each side, and what a unit is called:
/// pure parsing, table-tested.
@Suite struct SystemSideParsingTests {
    @Test(arguments: [
        ("/user.slice/user-1000.slice/session-3.scope", CgroupPlace.userSlice(1000)),
        ("/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-1.scope", .userSlice(1000)),
        ("/system.slice/apt-daily.service", .systemUnit("apt-daily.service")),
        ("/system.slice/system-getty.slice/getty@tty1.service", .systemUnit("getty@tty1.service")),
        ("/system.slice/docker.service/payload", .systemUnit("docker.service")),
        ("/machine.slice/libpod-abc.scope", .systemUnit("libpod-abc.scope")),
        ("/", .unplaced), ("/init.scope", .unplaced), ("/app-gnome-x-1.scope", .unplaced),
        ("/user.slice", .unplaced), ("/user.slice/user-x.slice/s.scope", .unplaced), ("/system.slice", .unplaced),
        ("/lxc.payload.c1/system.slice/x.service", .unplaced),
    ])
    func cgroupPlaces(path: String, place: CgroupPlace) {
        #expect(CgroupPlace(path: path) == place)
    }

    @Test func whoseASocketIs() {
        let user = TrafficAudience.user(1000)
        #expect(user.counts(socketUID: 0, cgroup: "/user.slice/user-1000.slice/session-2.scope"))
        #expect(!user.counts(socketUID: 1000, cgroup: "/user.slice/user-1001.slice/session-5.scope"))
        #expect(!user.counts(socketUID: 1000, cgroup: "/system.slice/foo.service"))
        #expect(user.counts(socketUID: 1000, cgroup: nil), "the uid rule where there are no cgroups")
        #expect(!user.counts(socketUID: 0, cgroup: "/"))
        #expect(TrafficAudience.system.counts(socketUID: 1000, cgroup: "/system.slice/foo.service"))
        #expect(!TrafficAudience.system.counts(socketUID: 0, cgroup: "/user.slice/user-1000.slice/session-2.scope"))
        #expect(!TrafficAudience.system.counts(socketUID: 0, cgroup: nil))
    }

    @Test func unitNamesAndIcons() {
        let instance = UnitName("getty@tty1.service")
        #expect(instance.template == "getty@.service" && instance.instance == "tty1")
        #expect(UnitName("apt-daily.service").template == "apt-daily.service")
        #expect(SystemUnitIcons.icon(of: "fwupd-refresh.service") == "system-software-update")
        #expect(SystemUnitIcons.icon(of: "docker.service") == nil)
    }

    @Test func descriptionsFromUnitFiles() throws {
        let text = """
            # a comment
            [Unit]
            Description=First
            Description = Daily apt download activities\u{20}
            Documentation=man:apt(8)
            [Service]
            Description=Not this one
            """
        #expect(UnitDescriptions.description(inUnitFile: text) == "Daily apt download activities")
        #expect(UnitDescriptions.description(inUnitFile: "[Service]\nDescription=x\n") == nil)
        #expect(UnitDescriptions.description(inUnitFile: "[Unit]\nDescription=\n") == nil)
        #expect(UnitDescriptions.specifiersExpanded("Getty on %I (%n, %p, 100%%)", instance: "tty1", unit: "getty@tty1.service")
            == "Getty on tty1 (getty@tty1.service, getty, 100%)")
        #expect(PrintableText.label("a\u{1B}[31mb\u{202E}\nc") == "a [31mb c", "the one rule: controls as spaces, a bidi override left out")
    }

    @Test func theSearchPathIsSystemds() {
        #expect(UnitDescriptions.searchPath(environment: nil).first == "/etc/systemd/system")
        #expect(UnitDescriptions.searchPath(environment: "/a:/b") == ["/a", "/b"])
        #expect(UnitDescriptions.searchPath(environment: "/a:").prefix(2) == ["/a", "/etc/systemd/system"])
    }

    @Test func withoutSystemdTheUnitFileTells() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("na-units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "[Unit]\nDescription=Test fetcher %i\n".write(
            to: directory.appendingPathComponent("fetch@.service"), atomically: true, encoding: .utf8)
        // A bus address where nothing listens: systemd does not answer, once.
        let descriptions = UnitDescriptions(bus: .address("unix:path=/nonexistent/na-bus"), searchPath: [directory.path])
        #expect(descriptions.description(of: "fetch@mirror.service") == "Test fetcher mirror")
        #expect(descriptions.description(of: "missing.service") == nil)
        #expect(descriptions.description(of: "../fetch@.service") == nil)
        let owner = SystemUnitOwners.owner(
            unit: "fetch@mirror.service", cgroup: "/system.slice/fetch@mirror.service",
            description: descriptions.description(of: "fetch@mirror.service"))
        #expect(owner.label == "Test fetcher mirror" && owner.application == "fetch@mirror.service" && owner.icon == nil)
    }
}

/// `UnitDescriptions` asking systemd: python-dbusmock's `systemd` template on a private bus
/// that stands for the system bus, a unit added to it with a `Description`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct UnitDescriptionsFromSystemdTests {
    @Test func systemdsAnswerComesBeforeTheUnitFile() throws {
        let bus = try PrivateBus()
        let systemd = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "systemd"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { systemd.send(signal: SIGTERM) }
        try waitUntil("dbusmock's systemd to own its name: \(systemd.stderrText)", timeout: .seconds(20)) {
            let status = try run("busctl", ["--address=\(bus.address)", "status", "org.freedesktop.systemd1"])
            return status.succeeded
        }
        let unitPath = "/org/freedesktop/systemd1/unit/fetch_service"
        for (path, member, arguments) in [
            ("/org/freedesktop/systemd1", "org.freedesktop.DBus.Mock.AddMockUnit", ["string:fetch.service"]),
            (unitPath, "org.freedesktop.DBus.Mock.AddProperty",
             ["string:org.freedesktop.systemd1.Unit", "string:Description", "variant:string:Fetcher, as systemd says"]),
        ] {
            let result = try run(
                "dbus-send", ["--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.systemd1", path, member] + arguments)
            #expect(result.succeeded, "\(member): \(result)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("na-units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "[Unit]\nDescription=Fetcher, as its file says\n".write(
            to: directory.appendingPathComponent("fetch.service"), atomically: true, encoding: .utf8)
        try "[Unit]\nDescription=Other, from its file\n".write(
            to: directory.appendingPathComponent("other.service"), atomically: true, encoding: .utf8)
        let descriptions = UnitDescriptions(bus: .address(bus.address), searchPath: [directory.path])
        #expect(descriptions.description(of: "fetch.service") == "Fetcher, as systemd says")
        // A unit systemd does not know: its file tells.
        #expect(descriptions.description(of: "other.service") == "Other, from its file")
    }
}
