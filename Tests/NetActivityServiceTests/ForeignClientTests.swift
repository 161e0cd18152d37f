import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

/// The service as `busctl`, `dbus-send` and `gdbus` meet it: proof that it speaks D-Bus, not
/// just to our own client.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ForeignClientTests {
    private let name = NetActivityBus.name.rawValue
    private let path = NetActivityBus.path.rawValue
    private let interface = NetActivityBus.interface.rawValue

    // MARK: - busctl

    @Test func busctlPushAndPopFromSeparateProcesses() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let client = try service.probe()

        let push = try service.busctlCall("Push")
        #expect(push.succeeded && push.stdout.isEmpty, "\(push)")
        #expect(try client.count() == 1, "the Push outlives the busctl process that made it")
        let secondPush = try service.busctlCall("Push")
        #expect(secondPush.succeeded, "\(secondPush)")
        #expect(try client.count() == 2)

        for expected: UInt32 in [1, 0] {
            let pop = try service.busctlCall("Pop")
            #expect(pop.succeeded, "a Pop from another process: \(pop)")
            #expect(try client.count() == expected)
        }
        let refused = try service.busctlCall("Pop")
        #expect(!refused.succeeded, "Pop at 0 must fail: \(refused)")
        #expect(!refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        #expect(try client.count() == 0)
    }

    @Test func busctlBeginActivityEndsWithTheProcess() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let client = try service.probe()
        let result = try service.busctlCall("BeginActivity", ["s", "from busctl"])
        try #require(result.succeeded, "\(result)")
        let words = result.stdout.split(whereSeparator: \.isWhitespace)
        #expect(words.first == "u", "busctl printed \(result.stdout.debugDescription)")
        let id = try #require(words.last.flatMap { UInt32($0) })
        #expect(id != 0)
        try waitUntil("busctl's activity to end once busctl has left the bus") { try client.count() == 0 }
        #expect(try client.begin("later") > id)
    }

    @Test func busctlUpdateAndEndReachTheServiceWithTheirArguments() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let owner = try service.probe()
        let id = try owner.begin("owned by the test")
        try owner.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])
        let before = try owner.observedState()

        // busctl's own activities end when it exits, so from busctl these calls can only be
        // refused; the refusal must be the one a non-owner gets, proving the arguments arrived.
        let stranger = try service.probe()
        let calls: [(String, [String], [Value])] = [
            ("UpdateActivity", ["utt", "\(id)", "2", "2"], [.uint32(id), .uint64(2), .uint64(2)]),
            ("EndActivity", ["u", "\(id)"], [.uint32(id)]),
            ("UpdateActivity", ["utt", "\(id + 100)", "1", "2"], [.uint32(id + 100), .uint64(1), .uint64(2)]),
            ("EndActivity", ["u", "0"], [.uint32(0)]),
        ]
        for (member, arguments, values) in calls {
            let expected = try #require(
                expectCallFails(withOneOf: [.accessDenied, .unknownActivity]) {
                    try stranger.call(MemberName(member), values)
                })
            let result = try service.busctlCall(member, arguments)
            #expect(!result.succeeded, "\(member) \(arguments): \(result)")
            // busctl prints the message of an unfamiliar error, but for a standard name it
            // knows an errno for (AccessDenied is EACCES) it prints that errno's text instead.
            let report = expected.name == .accessDenied ? "Access denied" : expected.message
            #expect(result.stderr.contains(report), "busctl \(member) \(arguments) should report \(expected): \(result.stderr)")
        }
        #expect(try owner.observedState() == before)
    }

    @Test func busctlGetPropertyReadsEveryProperty() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let client = try service.probe()
        let version = try #require(try client.property("Version").string)
        #expect(try service.busctlProperty("Active") == "b false")
        #expect(try service.busctlProperty("Visible") == "b false")
        #expect(try service.busctlProperty("Count") == "u 0")
        #expect(try service.busctlProperty("Progress") == "d -1")
        #expect(try service.busctlProperty("Activities") == "a(ussttt) 0")
        #expect(try service.busctlProperty("Version") == "s \"\(version)\"")

        try client.call("Push")
        let id = try client.begin("net")
        try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(4)])
        let started = try #require(try client.listedActivities().first?.started)
        try waitUntil("Visible to become true") { try client.boolProperty("Visible") }
        #expect(try service.busctlProperty("Active") == "b true")
        #expect(try service.busctlProperty("Visible") == "b true")
        #expect(try service.busctlProperty("Count") == "u 2")
        #expect(try service.busctlProperty("Progress") == "d 0.25")
        #expect(try service.busctlProperty("Activities") == "a(ussttt) 1 \(id) \"\(client.uniqueName)\" \"net\" 1 4 \(started)")
    }

    @Test func busctlIntrospectListsEveryMethodAndProperty() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let result = try service.busctl(["introspect", name, path, interface])
        try #require(result.succeeded, "\(result)")
        // NAME TYPE SIGNATURE RESULT/VALUE FLAGS, whitespace-separated.
        var rows: [String: [String]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let columns = line.split(whereSeparator: \.isWhitespace).map(String.init)
            if let first = columns.first { rows[first] = Array(columns.dropFirst()) }
        }
        let expected: [String: [String]] = [
            ".Push": ["method", "-", "-", "-"],
            ".Pop": ["method", "-", "-", "-"],
            ".BeginActivity": ["method", "s", "u", "-"],
            ".UpdateActivity": ["method", "utt", "-", "-"],
            ".EndActivity": ["method", "u", "-", "-"],
            ".Active": ["property", "b", "false", "emits-change"],
            ".Visible": ["property", "b", "false", "emits-change"],
            ".Count": ["property", "u", "0", "emits-change"],
            ".Progress": ["property", "d", "-1", "emits-change"],
            ".Activities": ["property", "a(ussttt)", "0", "emits-invalidation"],
        ]
        for (member, columns) in expected {
            #expect(rows[member] == columns, "\(member) in:\n\(result.stdout)")
        }
        let version = try #require(rows[".Version"])
        #expect(version.first == "property" && version.dropFirst().first == "s" && version.last == "const", "\(version)")
    }

    // MARK: - dbus-send

    /// `dbus-send --print-reply` to the service. `--bus=` registers with the daemon; dbus-send's
    /// `--address=` is an alias of `--peer=`, which skips Hello and so gets no reply from a bus.
    private func dbusSend(_ service: ServiceDaemon, _ member: String, _ arguments: [String] = []) throws -> ProcessResult {
        try run("dbus-send", ["--bus=\(service.bus.address)", "--print-reply", "--reply-timeout=10000",
                              "--dest=\(name)", path, member] + arguments)
    }

    @Test func dbusSendCallsPushPopBeginAndGet() throws {
        try requireTool("dbus-send")
        let service = try ServiceDaemon()
        let client = try service.probe()

        let push = try dbusSend(service, "\(interface).Push")
        #expect(push.succeeded && push.stdout.contains("method return"), "\(push)")
        #expect(try client.count() == 1)

        let count = try dbusSend(service, "org.freedesktop.DBus.Properties.Get", ["string:\(interface)", "string:Count"])
        #expect(count.succeeded && count.stdout.contains("variant") && count.stdout.contains("uint32 1"), "\(count)")

        let begin = try dbusSend(service, "\(interface).BeginActivity", ["string:from dbus-send"])
        #expect(begin.succeeded, "\(begin)")
        let lastLine = begin.stdout.split(separator: "\n").last ?? ""
        let idText = lastLine.split(whereSeparator: { $0.isWhitespace })
        #expect(idText.first == "uint32" && idText.count == 2, "\(begin.stdout)")
        #expect((idText.last.flatMap { UInt32($0) } ?? 0) != 0)

        let pop = try dbusSend(service, "\(interface).Pop")
        #expect(pop.succeeded, "\(pop)")
        try waitUntil("dbus-send's activity to end with the process") { try client.count() == 0 }

        let refused = try dbusSend(service, "\(interface).Pop")
        #expect(!refused.succeeded)
        #expect(refused.stderr.contains("Error io.github.netactivity.NetActivity1.Error.NotActive: "), "\(refused)")

        let progress = try dbusSend(service, "org.freedesktop.DBus.Properties.Get", ["string:\(interface)", "string:Progress"])
        #expect(progress.succeeded && progress.stdout.contains("double -1"), "\(progress)")
    }

    // MARK: - gdbus

    private func gdbusCall(_ service: ServiceDaemon, _ member: String, _ arguments: [String] = []) throws -> ProcessResult {
        try run("gdbus", ["call", "--address", service.bus.address, "--dest", name, "--object-path", path,
                          "--method", "\(interface).\(member)"] + arguments)
    }

    @Test func gdbusBeginActivityLastsAsLongAsTheProcess() throws {
        try requireTool("gdbus")
        let service = try ServiceDaemon()
        let watcher = try service.probe()
        try watcher.subscribe()

        let result = try gdbusCall(service, "BeginActivity", ["from gdbus"])
        try #require(result.succeeded, "\(result)")
        let match = try #require(
            result.stdout.firstMatch(of: /^\(uint32 (\d+),\)\s*$/), "gdbus printed \(result.stdout.debugDescription)")
        let id = try #require(UInt32(match.1))
        #expect(id != 0)

        // The activity existed (its object was announced) and ended when gdbus left the bus.
        var seen = false
        while !seen, let changed = watcher.nextPropertiesChanged(timeout: .seconds(10)) {
            seen = changed["Count"] == .uint32(1) && changed["Activities"] == invalidated
        }
        #expect(seen, "no PropertiesChanged announced activity \(id)")
        try waitUntil("gdbus's activity to end once gdbus has exited") { try watcher.count() == 0 }

        let ended = try gdbusCall(service, "UpdateActivity", ["\(id)", "1", "2"])
        #expect(!ended.succeeded)
        #expect(ended.stderr.contains("GDBus.Error:io.github.netactivity.NetActivity1.Error.UnknownActivity"), "\(ended)")
    }

    /// A message may carry file descriptors (dbus-daemon 1.16's `GetConnectionCredentials` reply
    /// carries a pidfd as `ProcessFD`): it reads whole, the hint it sits in is ignored as any
    /// unknown hint is, and the service keeps no descriptor.
    @Test func aHintCarryingADescriptorIsIgnoredAndTheDescriptorClosed() throws {
        try requireTool("python3")
        let service = try ServiceDaemon()
        let script = """
            import os, sys
            from gi.repository import Gio, GLib
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1],
                Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
            read, write = os.pipe()
            fds = Gio.UnixFDList.new_from_array([read])
            hints = {"x-descriptor": GLib.Variant("h", 0), "kind": GLib.Variant("s", "download")}
            reply, _ = bus.call_with_unix_fd_list_sync("\(name)", "\(path)", "\(interface)",
                "BeginActivityWithHints", GLib.Variant("(sa{sv})", ("with a descriptor", hints)),
                GLib.VariantType("(u)"), Gio.DBusCallFlags.NONE, 5000, fds)
            print(reply.unpack()[0], os.fstat(write).st_ino, flush=True)
            import time
            time.sleep(60)  # the test ends it
            """
        let client = try ChildProcess("/usr/bin/python3", ["-c", script, service.bus.address])
        let line = try #require(try client.readLine(timeout: .seconds(10)), "the client printed nothing: \(client.stderrText)")
        let parts = line.split(separator: " ")
        try #require(parts.count == 2 && UInt32(parts[0]) != nil, "\(line) \(client.stderrText)")
        let pipe = "pipe:[\(parts[1])]"
        // The service's decoded copy is closed before it replies; libdbus's own copy goes with the
        // message, once the call's handling is over, which may be just after the reply is out.
        func held() -> [String] {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(service.process.pid)/fd")) ?? []
            return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(service.process.pid)/fd/\($0)") }
        }
        try waitUntil("the service to close the descriptor it was sent", timeout: .seconds(5)) { !held().contains(pipe) }
        #expect(try service.probe().count() == 1)
    }

    @Test func gdbusUpdateActivityIsTypedFromIntrospection() throws {
        try requireTool("gdbus")
        let service = try ServiceDaemon()
        let owner = try service.probe()
        let id = try owner.begin("owned by the test")
        let before = try owner.observedState()

        // gdbus types "id completed total" from the introspected signature utt; a wrong guess
        // would be InvalidArgs, not the owner check.
        let denied = try gdbusCall(service, "UpdateActivity", ["\(id)", "1", "2"])
        #expect(!denied.succeeded)
        #expect(denied.stderr.contains("GDBus.Error:org.freedesktop.DBus.Error.AccessDenied"), "\(denied)")
        let ended = try gdbusCall(service, "EndActivity", ["\(id)"])
        #expect(ended.stderr.contains("GDBus.Error:org.freedesktop.DBus.Error.AccessDenied"), "\(ended)")
        #expect(try owner.observedState() == before)

        let push = try gdbusCall(service, "Push")
        #expect(push.succeeded && push.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "()", "\(push)")
        #expect(try owner.count() == 2)
    }
}
