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

/// The service missing, starting late, restarting, and started by D-Bus activation.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientResilienceTests {
    /// What "nothing waits for an answer" allows: well under the 25 s a call waits for its
    /// reply, so a call that waits fails the test, and loose enough for a loaded machine.
    static let promptly: Duration = .seconds(12)

    @Test func aMissingServiceIsReportedOnceAndTheStateIsAssertedWhenItStarts() async throws {
        let service = try ServiceDaemon(startService: false)
        let problems = ProblemLog()
        let client = service.client(problems)

        let clock = ContinuousClock()
        let started = clock.now
        client.push()
        client.push()
        let early = client.begin("early")
        early.report(completed: 10, total: 40)
        await client.flush()
        let dropped = client.begin("ended while the service was away")
        dropped.end()
        client.pop()
        for _ in 0..<50 {
            client.push()
            client.pop()
        }
        await client.flush()
        #expect(clock.now - started < Self.promptly, "calls and flush return promptly without a service")
        #expect(problems.all.count == 1, "one problem for the outage: \(problems.all)")
        #expect(problems.all.first?.contains("unavailable") == true, "\(problems.all)")

        try await onThread { try service.start() }
        let probe = try service.probe()
        try await waitUntil("the late service to get one push and the live activity") {
            try probe.count() == 2 && probe.labels() == ["early"]
        }
        let activity = try #require(try probe.activity("early"))
        #expect(activity.completed == 10 && activity.total == 40)
        #expect(try probe.processID(of: activity.owner) == UInt32(getpid()))
        #expect(problems.all.count == 1, "\(problems.all)")

        early.end()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(try probe.activities().isEmpty)
    }

    @Test func aServiceRestartGetsPushesAndLiveActivitiesBack() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let oldOwner = try #require(service.owner)

        client.push()
        client.push()
        client.push()
        let download = client.begin("download")
        download.report(completed: 100, total: 1000)
        let sync = client.begin("sync")
        let finished = client.begin("finished before the crash")
        finished.end()
        await client.flush()
        let before = try service.probe()
        #expect(try before.count() == 5)
        let ownerBefore = try #require(try before.activity("download")).owner

        try await onThread { try service.stop(signal: SIGKILL) }
        try await onThread { try service.start() }
        #expect(service.owner != oldOwner)

        let probe = try service.probe()
        try await waitUntil("the new service to hold 3 pushes and 2 activities") {
            try probe.count() == 5 && probe.labels().count == 2
        }
        try await waitUntil("the download's last progress to be re-reported") {
            try probe.activity("download")?.completed == 100
        }
        // Re-begun in no particular order: the new ids need not follow the original order.
        #expect(Set(try probe.labels()) == ["download", "sync"])
        let restored = try #require(try probe.activity("download"))
        #expect(restored.completed == 100 && restored.total == 1000)
        #expect(restored.owner == ownerBefore, "re-begun by the same client connection")
        #expect(try probe.activity("sync")?.total == 0)

        // The client keeps working with the new instance.
        download.report(completed: 1000, total: 1000)
        sync.end()
        client.pop()
        await client.flush()
        #expect(try probe.labels() == ["download"])
        #expect(try probe.activity("download")?.completed == 1000)
        #expect(try probe.count() == 3)
        download.end()
        client.pop()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(try probe.activities().isEmpty)
    }

    @Test func changesMadeWhileTheServiceIsDownAreAppliedToTheNewOne() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        client.push()
        client.push()
        let kept = client.begin("kept")
        let dropped = client.begin("dropped")
        await client.flush()

        try await onThread { try service.stop(signal: SIGTERM) }
        client.pop()
        dropped.end()
        kept.report(completed: 700, total: 1000)
        let late = client.begin("begun during the outage")
        await client.flush()

        try await onThread { try service.start() }
        let probe = try service.probe()
        try await waitUntil(
            "the new service to hold 1 push and 2 activities with progress: \(String(describing: try? probe.activities()))"
        ) {
            try probe.count() == 3
                && Set(probe.labels()) == ["kept", "begun during the outage"]
                && probe.activity("kept")?.completed == 700
        }
        late.end()
        kept.end()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func twoRestartsInARow() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        client.push()
        let activity = client.begin("survivor")
        activity.report(completed: 5, total: 10)
        await client.flush()
        for round in 1...2 {
            try await onThread { try service.stop(signal: SIGKILL) }
            try await onThread { try service.start() }
            let probe = try service.probe()
            try await waitUntil("round \(round): the push and the activity back") {
                try probe.count() == 2 && probe.activity("survivor")?.completed == 5
            }
        }
        activity.end()
        client.pop()
        await client.flush()
        #expect(try service.probe().count() == 0)
    }

    @Test func aReplacingInstanceGetsEverythingBack() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        client.push()
        let activity = client.begin("handed over")
        activity.report(completed: 3, total: 9)
        await client.flush()

        try await onThread { try service.start(["--replace"]) }
        let old = try #require(service.replaced.first)
        let result = try await onThread { try old.waitForExit(timeout: .seconds(10)) }
        #expect(result.exitStatus == 0, "the replaced instance exits 0: \(result)")

        let probe = try service.probe()
        try await waitUntil("the replacing instance to hold the push and the activity") {
            try probe.count() == 2 && probe.activity("handed over")?.completed == 3
        }
        activity.end()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func theBusDyingUnderTheClientNeitherCrashesNorBlocks() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let recorder = StateRecorder(client)
        client.push()
        let activity = client.begin("on a dying bus")
        await client.flush()
        try await recorder.wait(for: "the activity") { $0.last?.count == 2 }

        try await onThread { service.bus.kill() }
        try await recorder.wait(for: "an unavailable state after the bus died") { $0.last?.serviceAvailable == false }
        let clock = ContinuousClock()
        let started = clock.now
        client.pop()
        activity.report(completed: 1, total: 2)
        activity.end()
        let other = client.begin("after the bus died")
        other.end()
        await client.flush()
        for await state in client.states() {
            #expect(!state.serviceAvailable)
            break
        }
        #expect(clock.now - started < Self.promptly)
    }

    @Test func anUnreachableBusIsReportedOnceAndNothingBlocks() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let problems = ProblemLog()
        let client = NetActivityClient(bus: .address("unix:path=\(directory)/no-bus"), problems: problems.handler)
        let clock = ContinuousClock()
        let started = clock.now
        client.push()
        let activity = client.begin("nowhere")
        activity.report(completed: 1, total: 2)
        activity.end()
        client.pop()
        await client.flush()
        let state = await client.snapshot()
        #expect(!state.serviceAvailable)
        await client.tracking("still nowhere") { _ in await client.flush() }
        #expect(clock.now - started < Self.promptly)
        #expect(problems.all.count == 1, "\(problems.all)")
    }

    @Test func dbusActivationStartsTheServiceOnTheFirstCall() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = try builtProduct("netactivityd")
        try """
            [D-BUS Service]
            Name=\(NetActivityBus.name)
            Exec=\(daemon) --throttle-ms 0 --activation-delay 0 --completion-delay 0
            """.write(toFile: directory + "/\(NetActivityBus.name).service", atomically: true, encoding: .utf8)
        let service = try ServiceDaemon(startService: false, serviceDirectories: [directory])
        let probe = try service.probe()
        #expect(try probe.connection.owner(of: NetActivityBus.name) == nil)

        let problems = ProblemLog()
        let client = service.client(problems)
        client.push()
        let activity = client.begin("activated")
        await client.flush()

        let owner = try #require(try probe.connection.owner(of: NetActivityBus.name), "activation started netactivityd")
        let pid = try probe.connection.processID(of: owner)
        defer { kill(pid_t(pid), SIGTERM) }
        try await waitUntil("the activated service to hold the push and the activity") {
            try probe.count() == 2 && probe.labels() == ["activated"]
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
        activity.end()
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
    }
}
