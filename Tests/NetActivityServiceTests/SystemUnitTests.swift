import BusTestSupport
import Foundation
import NetActivityService
import Testing

/// The systemd units in `dbus/` as systemd reads them (`systemd-analyze verify`), the system
/// unit's sandboxing as `systemd-analyze security` rates it, and `make install-system`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SystemUnitTests {
    private static let repository = ActivationTests.repository
    private static let systemUnit = "netactivityd-system.service"
    private static let userUnit = "netactivityd.service"
    private static let busName = NetActivityBus.name.rawValue

    // MARK: - systemd-analyze

    @Test func systemdAnalyzeVerifiesTheSystemUnit() throws {
        let units = try FilledUnits()
        let result = try run("systemd-analyze", ["verify", units.path(Self.systemUnit)])
        #expect(result.succeeded, "\(result)")
        // Unknown keys and bad values are warnings: verify still exits 0.
        #expect(!result.stderr.contains(Self.systemUnit), "systemd-analyze warned about the unit:\n\(result.stderr)")
    }

    @Test func systemdAnalyzeVerifiesTheUserUnit() throws {
        let units = try FilledUnits()
        // --user needs a runtime directory; the test's own, not the ambient session's.
        let runtime = units.directory + "/runtime"
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let result = try run(
            "systemd-analyze", ["--user", "verify", units.path(Self.userUnit)],
            environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(result.succeeded, "\(result)")
        #expect(!result.stderr.contains(Self.userUnit), "systemd-analyze warned about the unit:\n\(result.stderr)")
    }

    /// docs/system-bus.md records the figure; `--offline` needs systemd 252 or later.
    @Test func systemdAnalyzeSecurityRatesTheSystemUnitAtMost2_5() throws {
        let units = try FilledUnits()
        let result = try run(
            "systemd-analyze", ["security", "--offline=true", "--no-pager", units.path(Self.systemUnit)])
        try #require(result.succeeded, "systemd-analyze security --offline (systemd 252 or later): \(result)")
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
            "no overall exposure level in:\n\(result.stdout)")
        let figure = try #require(
            line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) },
            "no figure in \(line)")
        #expect(figure <= 2.5, "\(line)\n\(result.stdout)")
    }

    /// What the unit must keep, and what it must not gain: ProtectProc=invisible and
    /// ProcSubset=pid would hide the clients' /proc entries the service reads.
    @Test func systemUnitKeepsItsSandbox() throws {
        let text = try String(contentsOfFile: Self.repository + "/dbus/\(Self.systemUnit).in", encoding: .utf8)
        let settings = Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        let required = [
            "Type=dbus", "BusName=\(Self.busName)", "ExecStart=@bindir@/netactivityd --system",
            "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
            "PrivateDevices=yes", "CapabilityBoundingSet=", "RestrictAddressFamilies=AF_UNIX",
            "MemoryDenyWriteExecute=yes", "SystemCallFilter=@system-service",
        ]
        for setting in required {
            #expect(settings.contains(setting), "\(Self.systemUnit).in lacks \(setting)")
        }
        for key in ["ProtectProc=", "ProcSubset=", "DynamicUser="] {
            #expect(!settings.contains { $0.hasPrefix(key) }, "\(Self.systemUnit).in sets \(key)")
        }
    }

    // MARK: - make install-system

    @Test func installSystemStagesEveryFileUnderDestdirAndUninstallRemovesThem() throws {
        try requireTool("make")
        let binary = try builtProduct("netactivityd")
        let stage = try FilledUnits()
        let destdir = stage.directory + "/root"
        func make(_ target: String) throws {
            let result = try run(
                "make", ["-C", Self.repository, target, "DESTDIR=\(destdir)", "NETACTIVITYD=\(binary)"],
                timeout: .seconds(120))
            try #require(result.succeeded, "make \(target): \(result)")
        }
        try make("install-system")

        // PREFIX defaults to /usr for the system install.
        let expected = [
            "usr/bin/netactivityd",
            "usr/share/dbus-1/system.d/\(Self.busName).conf",
            "usr/share/dbus-1/system-services/\(Self.busName).service",
            "usr/lib/systemd/system/\(Self.systemUnit)",
            "usr/share/dbus-1/interfaces/\(Self.busName).xml",
            // The system-side bridge (its own tests are NetActivityBridgeTests' SystemBridgeUnitTests).
            "usr/bin/netactivity",
            "usr/lib/systemd/system/netactivity-bridge-system.service",
            "usr/lib/systemd/system/multi-user.target.wants/netactivity-bridge-system.service",
            "usr/lib/sysusers.d/netactivity.conf",
        ]
        #expect(try files(under: destdir) == Set(expected))
        #expect(FileManager.default.isExecutableFile(atPath: destdir + "/usr/bin/netactivityd"))
        #expect(
            FileManager.default.contentsEqual(
                atPath: destdir + "/usr/share/dbus-1/system.d/\(Self.busName).conf",
                andPath: Self.repository + "/dbus/\(Self.busName).conf"))

        let activation = try String(
            contentsOfFile: destdir + "/usr/share/dbus-1/system-services/\(Self.busName).service", encoding: .utf8)
        #expect(keyValue("Name", in: activation) == Self.busName)
        #expect(keyValue("Exec", in: activation) == "/usr/bin/netactivityd --system")
        #expect(keyValue("User", in: activation) == "root")
        #expect(keyValue("SystemdService", in: activation) == Self.systemUnit)
        let unit = try String(contentsOfFile: destdir + "/usr/lib/systemd/system/\(Self.systemUnit)", encoding: .utf8)
        #expect(keyValue("ExecStart", in: unit) == "/usr/bin/netactivityd --system")
        #expect(!unit.contains("@bindir@") && !unit.contains("@datadir@"), "placeholder left in the installed unit:\n\(unit)")

        try make("uninstall-system")
        #expect(try files(under: destdir) == [])
    }
}

// MARK: - Helpers

/// The units of `dbus/` with `@bindir@` naming the built `netactivityd` (systemd-analyze
/// checks that ExecStart= exists), in a fresh directory removed when released.
private final class FilledUnits {
    let directory: String

    init() throws {
        try requireTool("systemd-analyze")
        let bindir = URL(fileURLWithPath: try builtProduct("netactivityd")).deletingLastPathComponent().path
        directory = "/tmp/netactivity-units-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for unit in ["netactivityd.service", "netactivityd-system.service"] {
            let template = try String(
                contentsOfFile: ActivationTests.repository + "/dbus/\(unit).in", encoding: .utf8)
            try template.replacingOccurrences(of: "@bindir@", with: bindir)
                .replacingOccurrences(of: "@datadir@", with: "/usr/share")
                .write(toFile: path(unit), atomically: true, encoding: .utf8)
        }
    }

    func path(_ unit: String) -> String { directory + "/" + unit }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Regular files under `root`, as paths relative to it.
private func files(under root: String) throws -> Set<String> {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    var found: Set<String> = []
    for case let relative as String in walker {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
            found.insert(relative)
        }
    }
    return found
}

/// The value of the first `key=` line of a unit or activation file.
private func keyValue(_ key: String, in file: String) -> String? {
    file.split(separator: "\n").first { $0.hasPrefix(key + "=") }
        .map { String($0.dropFirst(key.count + 1)).trimmingCharacters(in: .whitespaces) }
}
