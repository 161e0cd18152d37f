import BusTestSupport
import Foundation
import Testing

/// The system-side bridge's unit (`dbus/netactivity-bridge-system.service.in`) as systemd reads
/// it: `systemd-analyze verify`, and its exposure (`systemd-analyze security`) beside the
/// service's. That the bridge works inside the sandbox it sets is `TrafficSystemTests`' first
/// test, run in `Side.unitSandbox`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SystemBridgeUnitTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let unit = "netactivity-bridge-system.service"
    static let serviceUnit = "netactivityd-system.service"

    /// The two system units with their paths filled in, in a directory of their own.
    final class Filled {
        let directory = "/tmp/netactivity-bridge-units-" + UUID().uuidString.prefix(8)

        init() throws {
            try requireTool("systemd-analyze")
            let bindir = URL(fileURLWithPath: try builtProduct("netactivity")).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            for unit in [SystemBridgeUnitTests.unit, SystemBridgeUnitTests.serviceUnit] {
                try String(contentsOfFile: SystemBridgeUnitTests.repository + "/dbus/\(unit).in", encoding: .utf8)
                    .replacingOccurrences(of: "@bindir@", with: bindir).replacingOccurrences(of: "@datadir@", with: "/usr/share")
                    .write(toFile: directory + "/" + unit, atomically: true, encoding: .utf8)
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        /// The overall exposure `systemd-analyze security --offline` gives `unit`.
        func exposure(of unit: String) throws -> Double {
            let result = try run("systemd-analyze", ["security", "--offline=true", "--no-pager", directory + "/" + unit])
            try #require(result.succeeded, "systemd-analyze security --offline (systemd 252 or later): \(result)")
            let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
            return try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        }
    }

    @Test func systemdAnalyzeVerifiesTheUnit() throws {
        let units = try Filled()
        // --man=no: the man page is installed with the package, not on the test machine.
        let result = try run("systemd-analyze", ["verify", "--man=no", units.directory + "/" + Self.unit])
        #expect(result.succeeded, "\(result)")
        #expect(!result.stderr.contains(Self.unit), "systemd-analyze warned about the unit:\n\(result.stderr)")
    }

    /// No worse than the service's: the bridge must see the host's network namespace
    /// (PrivateNetwork= would hide every socket) and speak netlink, which the service never does,
    /// and makes up for both by running as a user of its own, not root. docs/system-bus.md
    /// records both figures.
    @Test func itsExposureIsNoWorseThanTheServices() throws {
        let units = try Filled()
        let bridge = try units.exposure(of: Self.unit)
        let service = try units.exposure(of: Self.serviceUnit)
        #expect(bridge <= service + 1e-9, "bridge \(bridge), service \(service)")
    }

    @Test func itRunsTheSystemSideAndStartsAtBoot() throws {
        let text = try String(contentsOfFile: Self.repository + "/dbus/\(Self.unit).in", encoding: .utf8)
        let settings = Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        for setting in [
            "ExecStart=@bindir@/netactivity --system bridge", "Type=dbus", "BusName=io.github.netactivity.Bridge",
            "User=netactivity-bridge",
            "WantedBy=multi-user.target", "CapabilityBoundingSet=", "NoNewPrivileges=yes", "PrivateUsers=yes",
            "ProtectProc=invisible", "ProcSubset=pid", "RestrictAddressFamilies=AF_UNIX AF_NETLINK", "IPAddressDeny=any",
        ] {
            #expect(settings.contains(setting), "\(Self.unit).in lacks \(setting)")
        }
        #expect(!settings.contains { $0.hasPrefix("PrivateNetwork=") }, "sock_diag would see only a private namespace")
    }
}
