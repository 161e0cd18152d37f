import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import Testing

/// The client library with contract version 3: hints at `begin`, `report(fraction:)`, the new
/// snapshot fields, reading its own writes, and the fall back to a version 2 service.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientVersion3Tests {
    @Test func hintsAndFractionsReachTheService() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        let activity = client.begin(
            "Downloading updates",
            hints: ActivityHints(
                application: "org.gnome.Software", icon: String(repeating: "i", count: 300), kind: .update))
        activity.report(fraction: 0.25)
        await client.flush()
        let id = try #require(try probe.activity("Downloading updates")?.id)
        let properties = try #require(try probe.call(
            "GetAll", [.string(NetActivityBus.activityInterface.rawValue)], interface: .properties,
            path: NetActivityBus.activityPath(id)
        ).first?.stringKeyedEntries?.compactMapValues { $0.unwrapped })
        #expect(properties["ClaimedApplication"] == .string("org.gnome.Software"))
        #expect(properties["Kind"] == .string("update"))
        #expect(properties["Icon"] == .string(String(repeating: "i", count: 255)), "a long hint is cut, not refused")
        #expect(properties["Fraction"] == .double(0.25))

        let snapshot = await client.snapshot()
        let seen = try #require(snapshot.activities.first)
        #expect(seen.kind == "update" && seen.claimedApplication == "org.gnome.Software")
        #expect(seen.fraction == 0.25 && seen.total == 0)
        #expect(snapshot.progress == 0.25)
        #expect(seen.remainingSeconds == nil, "a fraction says nothing of the bytes left")

        activity.report(completed: 300, total: 1_000)
        await client.flush()
        #expect(try probe.activity("Downloading updates").map { [$0.completed, $0.total] } == [300, 1_000])
        activity.end()
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func aClientReadsItsOwnWrites() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        for round in 0..<3 {
            let state = await client.tracking("Round \(round)") { activity in
                activity.report(completed: 512, total: 2_048)
                return await client.snapshot()
            }
            #expect(state.count == 1, "round \(round): \(state)")
            #expect(state.activities.first?.completed == 512, "round \(round): the report is in the state")
            let after = await client.snapshot()
            #expect(after.count == 0 && !after.active, "round \(round): the ended activity is gone: \(after)")
        }
    }

    @Test func aReportJustBeforeTheEndReachesTheServiceFirst() async throws {
        let service = try ServiceDaemon(["--throttle-ms", "0"])
        let probe = try service.probe()
        try probe.connection.addMatch("type='signal',sender='\(NetActivityBus.name)'")
        let client = service.client(ProblemLog())
        let activity = client.begin("quick")
        await client.flush()
        activity.report(completed: 2_048, total: 2_048)
        activity.end()
        await client.flush()
        var seen: [Value] = []
        while let message = probe.nextMessage(timeout: .milliseconds(300)) {
            if let completed = (try? message.arguments())?.dropFirst().first?.stringKeyedEntries?["Completed"]?.unwrapped {
                seen.append(completed)
            }
        }
        #expect(seen.contains(.uint64(2_048)), "the last report before the end: \(seen)")
    }

    @Test func aVersionTwoServiceGetsPlainActivitiesAndBytesAndItIsSaidOnce() async throws {
        let bus = try PrivateBus()
        let old = try VersionTwoService(address: bus.address)
        let problems = ProblemLog()
        let client = NetActivityClient(bus: .address(bus.address), problems: problems.handler)
        let first = client.begin("with hints", hints: ActivityHints(kind: .download))
        first.report(fraction: 0.5)
        let second = client.begin("more hints", hints: ActivityHints(application: "org.example.App"))
        second.report(fraction: 1)
        await client.flush()
        try await waitUntil("both begun the version 2 way") { old.calls.filter { $0.hasPrefix("BeginActivity(") }.count == 2 }
        try await waitUntil("the fractions as bytes") {
            old.calls.contains("UpdateActivity(1, 5000, 10000)") && old.calls.contains("UpdateActivity(2, 10000, 10000)")
        }
        let said = problems.all.filter { $0.contains("interface version 3") }
        #expect(said.count == 1, "\(problems.all)")
        #expect(!old.calls.contains { $0.hasPrefix("UpdateActivityFraction") && !$0.contains("refused") })
        first.end()
        second.end()
        await client.flush()
        old.stop()
    }
}

/// A stand-in for a service of contract version 2 (no `BeginActivityWithHints`, no
/// `UpdateActivityFraction`), answered by an `EventLoop` on a thread of its own; it records
/// every call by name and arguments.
final class VersionTwoService: @unchecked Sendable {
    private let connection: Connection
    private let server: ObjectServer
    private let loop: EventLoop
    private let finished = DispatchSemaphore(value: 0)
    private let recorded = Locked<[String]>([])
    private let nextID = Locked<UInt32>(1)

    var calls: [String] { recorded.withLock { $0 } }

    init(address: String) throws {
        connection = try Connection(.address(address))
        server = ObjectServer(connection: connection)
        loop = try EventLoop()
        let record: @Sendable (String) -> Void = { [recorded] call in recorded.withLock { $0.append(call) } }
        let nextID = nextID
        server.export(
            [
                Interface(
                    NetActivityBus.interface,
                    methods: [
                        Method("BeginActivity", inputs: [Argument("label", "s")], outputs: [Argument("id", "u")]) { call in
                            record("BeginActivity(\(call.arguments[0].string ?? ""))")
                            return [.uint32(nextID.withLock { id in defer { id += 1 }; return id })]
                        },
                        Method("UpdateActivity", inputs: [Argument("id", "u"), Argument("c", "t"), Argument("t", "t")]) {
                            call in
                            let values = call.arguments.map { "\($0.uint32.map(UInt64.init) ?? $0.uint64 ?? 0)" }
                            record("UpdateActivity(\(values.joined(separator: ", ")))")
                            return []
                        },
                        Method("EndActivity", inputs: [Argument("id", "u")]) { call in
                            record("EndActivity(\(call.arguments[0].uint32 ?? 0))")
                            return []
                        },
                    ])
            ], at: NetActivityBus.path)
        loop.attach(connection)
        guard try connection.requestName(NetActivityBus.name, options: [.doNotQueue]) == .primaryOwner else {
            throw BusTestError("the version 2 stand-in could not own \(NetActivityBus.name)")
        }
        let loop = loop
        let finished = finished
        let thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        loop.stop()
        _ = finished.wait(timeout: .now() + 10)
        loop.detach(connection)
    }
}
