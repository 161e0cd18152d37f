import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// netactivityd SIGKILLed while clients hold activities: library clients re-assert what they
/// hold in the new instance (raw clients, which keep no state, do not), and D-Bus activation
/// brings the service back on the next call.
@Suite(.system, .tags(.system), .timeLimit(.minutes(10))) struct RestartTests {
    @Test func libraryClientsReassertAfterTheServiceIsKilledAndStartedAgain() async throws {
        let service = try ServiceDaemon(["--throttle-ms", "0"], leakChecking: true)
        let problems = ProblemLog()
        let a = NetActivityClient(bus: .address(service.address), problems: problems.handler)
        let b = NetActivityClient(bus: .address(service.address), problems: problems.handler)
        let c = NetActivityClient(bus: .address(service.address), problems: problems.handler)
        a.push()
        a.push()
        let download = a.begin("a download")
        download.report(completed: 100, total: 1_000)
        let sync = a.begin("a sync")
        b.push()
        let upload = b.begin("b upload")
        b.begin("b done").end()
        let batch = (1...5).map { c.begin("c \($0)") }
        // A raw client keeps no state of its own: what it held dies with the service.
        let raw = try ChildProcess(
            try builtProduct("na-testclient"),
            ["--address", service.address, "--push", "3", "--begin", "raw", "--count", "2"])
        #expect(try raw.readLine(timeout: .seconds(30))?.hasPrefix("ready ") == true, "\(raw.stderrText)")
        for client in [a, b, c] { await client.flush() }
        let probe = try service.probe()
        // The library's 3 pushes and 8 activities, the raw client's 3 and 2.
        #expect(try probe.count() == 3 + 8 + 3 + 2)

        try await onThread { try service.kill() }
        // Changes while the service is gone are kept by the library and sent on its return.
        sync.end()
        b.push()
        let late = c.begin("c late")
        try await onThread { try service.restart() }

        // The library's pushes are activities of their own, labelled "push", so they end with the app.
        let expectedLabels = ["a download", "b upload", "c 1", "c 2", "c 3", "c 4", "c 5", "c late"]
            + Array(repeating: "push", count: 4)
        try await onThread {
            let what = "the new instance to hold the library clients' 4 pushes and 8 activities"
            try waitUntil(what, timeout: .seconds(20)) {
                try probe.count() == 12 && probe.activities().map(\.label).sorted() == expectedLabels.sorted()
            }
        }
        // The progress follows the re-begun activity's reply.
        try await onThread {
            try waitUntil("the re-begun download to carry its progress again") {
                try probe.activities().contains { $0.label == "a download" && $0.completed == 100 && $0.total == 1_000 }
            }
        }
        let activities = try probe.activities()
        #expect(Set(activities.map(\.owner)).count == 3, "each client re-asserts on its own connection: \(activities)")

        // Two kills in quick succession, the second before the clients could re-assert.
        try await onThread {
            try service.kill()
            try service.restart()
            try service.kill()
            try service.restart()
            try waitUntil("the third instance to hold the same state, with nothing doubled", timeout: .seconds(20)) {
                try probe.count() == 12 && probe.activities().map(\.label).sorted() == expectedLabels.sorted()
            }
        }

        download.end()
        upload.end()
        late.end()
        for activity in batch { activity.end() }
        a.pop()
        a.pop()
        b.pop()
        b.pop()
        for client in [a, b, c] { await client.flush() }
        #expect(try probe.count() == 0)
        #expect(try probe.activities().isEmpty)
        #expect(problems.all.allSatisfy { $0.contains("unavailable") }, "\(problems.all)")
        #expect(service.process.isRunning)
    }

    @Test func busActivationBringsTheKilledServiceBackOnTheNextCall() async throws {
        let services = try ServiceDirectory(
            activating: try builtProduct("netactivityd"), arguments: ["--throttle-ms", "0"])
        let bus = try PrivateBus(serviceDirectories: [services.path])
        let probe = try ServiceProbe(address: bus.address)
        let problems = ProblemLog()
        let client = NetActivityClient(bus: .address(bus.address), problems: problems.handler)
        defer { Self.stopActivatedService(on: bus, probe: probe) }

        // The library's first call starts the service.
        client.push()
        let held = client.begin("held")
        await client.flush()
        let first = try Self.servicePID(probe)
        #expect(try probe.count() == 2)

        // Killed; the next call, from a raw client, starts a new instance, and the library
        // client re-asserts in it.
        try await onThread {
            try Self.kill(first, probe)
            #expect(try probe.count() <= 2, "the call that activates the service gets an answer")
            let what = "the activated instance to hold the library client's push and activity"
            try waitUntil(what, timeout: .seconds(20)) {
                try probe.count() == 2 && probe.activities().map(\.label).sorted() == ["held", "push"]
            }
        }
        let second = try Self.servicePID(probe)
        #expect(second != first)

        // Killed again; this time the library's own next call starts it.
        try await onThread { try Self.kill(second, probe) }
        let next = client.begin("next")
        await client.flush()
        try await onThread {
            try waitUntil("the third instance to hold both activities and the push", timeout: .seconds(20)) {
                try probe.count() == 3 && probe.activities().map(\.label).sorted() == ["held", "next", "push"]
            }
        }
        #expect(try Self.servicePID(probe) != second)
        held.end()
        next.end()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    // MARK: - Activated services

    private static func servicePID(_ probe: ServiceProbe) throws -> Int32 {
        let owner = try #require(try probe.connection.owner(of: NetActivityBus.name), "nobody owns the name")
        return Int32(bitPattern: try probe.connection.processID(of: owner))
    }

    /// SIGKILLs an activated instance and waits until the bus has seen it go.
    private static func kill(_ pid: Int32, _ probe: ServiceProbe) throws {
        #expect(Glibc.kill(pid, SIGKILL) == 0)
        try waitUntil("the killed service (pid \(pid)) to leave the bus") {
            try probe.connection.owner(of: NetActivityBus.name) == nil
        }
    }

    /// Stops the bus; the activated service must then exit on its own (it lost its bus).
    /// SIGKILLs it if not, so no test leaves it behind.
    private static func stopActivatedService(on bus: PrivateBus, probe: ServiceProbe) {
        let pid = try? servicePID(probe)
        bus.stop()
        guard let pid else { return }
        do {
            try waitUntil("the activated netactivityd (pid \(pid)) to exit after its bus stopped") { hasExited(pid) }
        } catch {
            Issue.record(error)
            _ = Glibc.kill(pid, SIGKILL)
        }
    }
}

// MARK: - Support

/// A temporary directory holding a D-Bus activation file for the service.
private final class ServiceDirectory {
    let path: String

    init(activating executable: String, arguments: [String]) throws {
        path = "/tmp/netactivity-fault-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let file = """
            [D-BUS Service]
            Name=\(NetActivityBus.name)
            Exec=\(([executable] + arguments).joined(separator: " "))

            """
        try file.write(toFile: path + "/\(NetActivityBus.name).service", atomically: true, encoding: .utf8)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Gone, or a zombie nobody has reaped yet.
private func hasExited(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
}
