import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system-bus policy, `dbus/io.github.netactivity.NetActivity1.conf`, on a bus configured
/// like the system bus: root owns the name and reports; `nobody` (a `setpriv` child) is refused
/// reporting and the name, and may read and watch. CI runs as root, which these tests need (to
/// be root, and to become nobody): they fail, not skip, anywhere else.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SystemBusPolicyTests {
    static let policyFile = ActivationTests.repository + "/dbus/io.github.netactivity.NetActivity1.conf"

    private let name = NetActivityBus.name.rawValue
    private let path = NetActivityBus.path.rawValue
    private let interface = NetActivityBus.interface.rawValue

    // MARK: - Root

    @Test func rootOwnsTheNameAndReports() throws {
        let service = try PolicedService()
        let root = try service.probe()
        try root.call("Push")
        let id = try root.begin("package download")
        #expect(id != 0)
        try root.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])
        #expect(try root.count() == 2)
        try root.call("EndActivity", [.uint32(id)])
        try root.call("Pop")
        #expect(try root.count() == 0)

        let push = try run("dbus-send", dbusSendArguments(service.bus, "\(interface).Push"))
        #expect(push.succeeded, "root's dbus-send Push: \(push)")
        #expect(try root.count() == 1)
    }

    // MARK: - Nobody is refused

    @Test func nobodyIsRefusedEveryReportingMethodAndSet() throws {
        let service = try PolicedService()
        let root = try service.probe()
        try root.call("Push")
        let id = try root.begin("root's")
        let before = try root.observedState()

        let calls: [(String, [String])] = [
            ("\(interface).Push", []),
            ("\(interface).Pop", []),
            ("\(interface).BeginActivity", ["string:mine"]),
            ("\(interface).UpdateActivity", ["uint32:\(id)", "uint64:1", "uint64:1"]),
            ("\(interface).EndActivity", ["uint32:\(id)"]),
            ("org.freedesktop.DBus.Properties.Set", ["string:\(interface)", "string:Count", "variant:uint32:7"]),
        ]
        for (member, arguments) in calls {
            let result = try asNobody("dbus-send", dbusSendArguments(service.bus, member, arguments))
            #expect(dbusSendError(result) == "org.freedesktop.DBus.Error.AccessDenied", "\(member) as nobody: \(result)")
            // The bus's refusal names the sender's uid: proof the call came from nobody.
            #expect(result.stderr.contains("uid=65534"), "\(member): \(result.stderr)")
        }
        #expect(try root.observedState() == before, "a refused call changed the service's state")
    }

    /// The system-side bridge (`netactivity --system bridge`, run by hand as root) owns its name
    /// so that one runs per machine; nobody may not take it.
    @Test func rootAloneOwnsTheSystemSideBridgesName() throws {
        try requireRoot()
        let bus = try PrivateBus.systemPolicy(policyFile: Self.policyFile)
        func request(_ prefix: [String]) throws -> ProcessResult {
            try run(
                prefix.first ?? "dbus-send",
                Array(prefix.dropFirst())
                    + ["--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                       "org.freedesktop.DBus.RequestName", "string:io.github.netactivity.Bridge", "uint32:0"])
        }
        let nobody = try request(["setpriv"] + self.nobody + ["dbus-send"])
        #expect(dbusSendError(nobody) == "org.freedesktop.DBus.Error.AccessDenied", "\(nobody)")
        let root = try request(["dbus-send"])
        #expect(root.succeeded && root.stdout.contains("uint32 1"), "root: \(root)\n--- bus ---\n\(bus.log)")
    }

    /// The system-side bridge's own user (`netactivity-bridge`, made by the package) owns the
    /// bridge's name and reports. This machine has no such user, so the policy is read with the
    /// user `daemon` in its place.
    @Test func theBridgesUserOwnsItsNameAndReports() throws {
        let policy = try String(contentsOfFile: Self.policyFile, encoding: .utf8)
        try #require(policy.contains("<policy user=\"netactivity-bridge\">"))
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/policy.conf"
        try policy.replacingOccurrences(of: "<policy user=\"netactivity-bridge\">", with: "<policy user=\"daemon\">")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let service = try PolicedService(policyFile: file)
        let asDaemon = ["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups"]
        let own = try run(
            "setpriv",
            Array(asDaemon.dropFirst())
                + ["dbus-send", "--bus=\(service.bus.address)", "--print-reply", "--dest=org.freedesktop.DBus",
                   "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName", "string:io.github.netactivity.Bridge", "uint32:0"])
        #expect(own.succeeded && own.stdout.contains("uint32 1"), "the bridge's user: \(own)\n--- bus ---\n\(service.bus.log)")
        let begin = try run(
            "setpriv", Array(asDaemon.dropFirst()) + ["dbus-send"] + dbusSendArguments(service.bus, "\(interface).BeginActivity", ["string:apt"]))
        #expect(begin.succeeded && begin.stdout.contains("uint32"), "the bridge's user reports: \(begin)")
    }

    @Test func nobodyCannotOwnTheName() throws {
        try requireRoot()
        let bus = try PrivateBus.systemPolicy(policyFile: Self.policyFile)
        let request = try asNobody(
            "dbus-send",
            ["--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.RequestName", "string:\(name)", "uint32:0"])
        #expect(dbusSendError(request) == "org.freedesktop.DBus.Error.AccessDenied", "\(request)")

        // Nor by starting the service itself.
        let service = try run(
            "setpriv", nobody + [try builtProduct("netactivityd"), "--address", bus.address], timeout: .seconds(10))
        #expect(service.exitStatus == 1, "netactivityd as nobody: \(service)")
        #expect(service.stderr.contains("not allowed to own"), "netactivityd as nobody: \(service)")
    }

    // MARK: - Nobody reads

    @Test func nobodyReadsPropertiesIntrospectsAndPings() throws {
        let service = try PolicedService()
        let root = try service.probe()
        try root.call("Push")

        let get = try asNobody(
            "dbus-send",
            dbusSendArguments(service.bus, "org.freedesktop.DBus.Properties.Get", ["string:\(interface)", "string:Count"]))
        #expect(get.succeeded && get.stdout.contains("uint32 1"), "Get Count as nobody: \(get)")

        let getAll = try asNobody(
            "dbus-send", dbusSendArguments(service.bus, "org.freedesktop.DBus.Properties.GetAll", ["string:\(interface)"]))
        #expect(getAll.succeeded, "GetAll as nobody: \(getAll)")
        for property in ["Active", "Visible", "Count", "Progress", "Activities", "Version"] {
            #expect(getAll.stdout.contains("\"\(property)\""), "GetAll lacks \(property): \(getAll.stdout)")
        }

        for objectPath in ["/", path] {
            let introspect = try asNobody(
                "dbus-send",
                dbusSendArguments(service.bus, "org.freedesktop.DBus.Introspectable.Introspect", path: objectPath))
            #expect(introspect.succeeded && introspect.stdout.contains("<node"), "Introspect \(objectPath): \(introspect)")
        }
        let introspect = try asNobody("busctl", ["--address=\(service.bus.address)", "introspect", name, path, interface])
        #expect(introspect.succeeded && introspect.stdout.contains(".BeginActivity"), "busctl introspect: \(introspect)")

        let ping = try asNobody("dbus-send", dbusSendArguments(service.bus, "org.freedesktop.DBus.Peer.Ping"))
        #expect(ping.succeeded, "Ping as nobody: \(ping)")
        let machineID = try asNobody("dbus-send", dbusSendArguments(service.bus, "org.freedesktop.DBus.Peer.GetMachineId"))
        #expect(machineID.succeeded, "GetMachineId as nobody: \(machineID)")
    }

    /// System-bus mode: one user cannot open many connections to get many times 1,024.
    @Test func theLimitOf1024HoldsPerUserAcrossConnections() throws {
        let service = try PolicedService()
        var first: ServiceProbe? = try service.probe()
        let second = try service.probe()
        let half = NetActivityBus.Limits.activitiesPerOwner / 2
        for client in [try #require(first), second] {
            // The system bus lets a connection wait for 128 replies at most.
            let replies = try client.pipelined("BeginActivity", [.string("mirror")], count: half, batch: 100)
            #expect(replies.allSatisfy { $0.kind == .methodReturn }, "\(replies.first { $0.kind == .error } as Any)")
        }
        let third = try service.probe()
        #expect(errorName { try third.begin("one too many") } == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(try third.count() == UInt32(2 * half))
        // One connection leaving frees its share for the others.
        first = nil
        try waitUntil("the first connection's activities to end") { try third.count() == UInt32(half) }
        #expect(try third.begin("fits again") != 0)
    }

    @Test func nobodyMayCallGetManagedObjectsAndReadActivityObjects() throws {
        let service = try PolicedService()
        let root = try service.probe()
        let id = try root.begin("firmware")

        let managed = try asNobody(
            "dbus-send", dbusSendArguments(service.bus, "org.freedesktop.DBus.ObjectManager.GetManagedObjects"))
        #expect(managed.succeeded && managed.stdout.contains("\(path)/activity/\(id)"), "\(managed)")

        let activity = try asNobody(
            "dbus-send",
            dbusSendArguments(
                service.bus, "org.freedesktop.DBus.Properties.GetAll", ["string:\(interface).Activity"],
                path: "\(path)/activity/\(id)"))
        #expect(activity.succeeded && activity.stdout.contains("firmware"), "\(activity)")
    }

    @Test func nobodyReceivesPropertiesChanged() throws {
        let service = try PolicedService()
        try requireTool("gdbus")
        let monitor = try ChildProcess(
            "setpriv", nobody + ["gdbus", "monitor", "--address", service.bus.address, "--dest", name, "--object-path", path])
        defer {
            monitor.send(signal: SIGTERM)
            _ = try? monitor.waitForExit(timeout: .seconds(10))
        }
        // gdbus subscribes to the signals before it asks who owns the name, and the bus
        // handles one connection's messages in order: once it names the owner, it listens.
        try waitUntil("gdbus monitor, as nobody, to report the name's owner") {
            guard monitor.isRunning else { throw BusTestError("gdbus monitor exited: \(monitor.stderrText)") }
            return monitor.stdoutText.contains("is owned by")
        }
        let root = try service.probe()
        try root.call("Push")
        try waitUntil("nobody's gdbus monitor to print PropertiesChanged with Count 1") {
            monitor.stdoutText.split(separator: "\n").contains {
                $0.contains("org.freedesktop.DBus.Properties.PropertiesChanged") && $0.contains("'Count': <uint32 1>")
            }
        }
    }

    // MARK: - An admin's group

    /// The `<policy group="…">` block the policy file's comment offers admins, with nobody's
    /// group: nobody may then report, and still may not own the name.
    @Test func groupBlockFromThePolicyCommentLetsThatGroupReport() throws {
        let policy = try String(contentsOfFile: Self.policyFile, encoding: .utf8)
        let start = try #require(policy.range(of: "<policy group=\""), "no <policy group=…> example in the policy file")
        let end = try #require(policy.range(of: "</policy>", range: start.upperBound..<policy.endIndex))
        let block = String(policy[start.lowerBound..<end.upperBound])
        let groupName = try #require(
            block.split(separator: "\"").dropFirst().first.map(String.init), "no group name in \(block)")
        let local = "<busconfig>\n" + block.replacingOccurrences(of: "\"\(groupName)\"", with: "\"nogroup\"") + "\n</busconfig>\n"
        let service = try PolicedService(extraPolicies: ["\(name)-local.conf": local])
        let root = try service.probe()

        let push = try asNobody("dbus-send", dbusSendArguments(service.bus, "\(interface).Push"))
        #expect(push.succeeded, "Push as nobody in group nogroup: \(push)\n--- bus ---\n\(service.bus.log)")
        #expect(try root.count() == 1)
        let begin = try asNobody("dbus-send", dbusSendArguments(service.bus, "\(interface).BeginActivity", ["string:backup"]))
        #expect(begin.succeeded && begin.stdout.contains("uint32"), "BeginActivity as nobody in group nogroup: \(begin)")

        let request = try asNobody(
            "dbus-send",
            ["--bus=\(service.bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.RequestName", "string:\(name)", "uint32:0"])
        #expect(dbusSendError(request) == "org.freedesktop.DBus.Error.AccessDenied", "\(request)")
    }

    // MARK: - Helpers

    /// `setpriv` arguments that drop to nobody:nogroup with no supplementary groups.
    private let nobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    /// Runs `tool` as nobody.
    private func asNobody(_ tool: String, _ arguments: [String]) throws -> ProcessResult {
        try requireTool("setpriv")
        try requireTool(tool)
        return try run("setpriv", nobody + [tool] + arguments)
    }

    /// `dbus-send` arguments for `member` (interface.member) on the service, waiting for the reply.
    private func dbusSendArguments(
        _ bus: PrivateBus, _ member: String, _ arguments: [String] = [], path objectPath: String? = nil
    ) -> [String] {
        ["--bus=\(bus.address)", "--print-reply", "--reply-timeout=10000", "--dest=\(name)",
         objectPath ?? path, member] + arguments
    }
}

// MARK: - The service on the policed bus

/// A system-like bus and `netactivityd --system --address` on it, started by root.
private final class PolicedService: @unchecked Sendable {
    // Declared first, so released first: the service stops before its bus.
    let daemon: ServiceDaemon
    let bus: PrivateBus

    init(policyFile: String = SystemBusPolicyTests.policyFile, extraPolicies: [String: String] = [:]) throws {
        try requireRoot()
        bus = try PrivateBus.systemPolicy(policyFile: policyFile, extraPolicies: extraPolicies)
        do {
            daemon = try ServiceDaemon(["--system"] + ServiceDaemon.immediate, address: bus.address)
        } catch {
            throw BusTestError("\(error)\n--- bus ---\n\(bus.log)")
        }
    }

    func probe() throws -> ServiceProbe {
        try daemon.probe()
    }
}

/// These tests start the service as root and drop to nobody with setpriv; elsewhere they fail
/// with this reason rather than skip, so CI (root) can never pass them by skipping.
private func requireRoot(sourceLocation: SourceLocation = #_sourceLocation) throws {
    try #require(
        getuid() == 0,
        "system-bus policy tests must run as root (CI does): they own the name as root and run clients as nobody",
        sourceLocation: sourceLocation)
}

/// The error name `dbus-send` printed ("Error org.freedesktop.DBus.Error.AccessDenied: …"), or nil.
private func dbusSendError(_ result: ProcessResult) -> String? {
    for line in result.stderr.split(separator: "\n") where line.hasPrefix("Error ") {
        return line.dropFirst("Error ".count).split(separator: ":").first.map(String.init)
    }
    return nil
}
