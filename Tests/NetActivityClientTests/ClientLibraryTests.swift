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

/// Every public call of the client library against a private bus and the real `netactivityd`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientLibraryTests {
    // MARK: - Shared counter

    @Test func pushAndPopChangeTheServiceCount() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        client.push()
        client.push()
        await client.flush()
        #expect(try probe.count() == 2)
        #expect(try probe.property("Active").bool == true)

        client.pop()
        await client.flush()
        #expect(try probe.count() == 1)
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(try probe.property("Active").bool == false)
        #expect(problems.all.isEmpty)
    }

    @Test func popWithoutPushIsReportedAndChangesNothing() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        try probe.call(NetActivityBus.Member.push)  // a script's push on the shared counter

        client.pop()
        await client.flush()
        #expect(problems.all.count == 1)
        #expect(problems.all.first?.contains("without a matching push()") == true, "\(problems.all)")
        #expect(try probe.count() == 1, "the library's pop never touches the shared counter")

        // Nothing is left owing: a later push/pop pair is exact.
        client.push()
        await client.flush()
        #expect(try probe.count() == 2)
        #expect(try probe.activities().map(\.label) == [NetActivityClient.pushLabel])
        client.pop()
        await client.flush()
        #expect(try probe.count() == 1)
        #expect(problems.all.count == 1)
    }

    @Test func pushesEndMostRecentFirst() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        client.push()
        await client.flush()
        let first = try #require(try probe.activities().first).id
        client.push()
        client.pop()
        await client.flush()
        #expect(try probe.activities().map(\.id) == [first])
        client.pop()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func beginReportAndEndShowInTheService() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        let activity = client.begin("Sync feeds")
        #expect(activity.label == "Sync feeds")
        #expect(!activity.isEnded)
        await client.flush()
        let begun = try #require(try probe.activity("Sync feeds"))
        #expect(begun.owner.hasPrefix(":"))
        #expect(begun.owner != probe.uniqueName)
        #expect(try probe.processID(of: begun.owner) == UInt32(getpid()), "the owner is this process's connection")
        #expect(begun.completed == 0 && begun.total == 0)
        #expect(try probe.count() == 1)
        #expect(try probe.progress() == -1)

        activity.report(completed: 512, total: 2048)
        await client.flush()
        let reported = try #require(try probe.activity("Sync feeds"))
        #expect(reported.id == begun.id)
        #expect(reported.completed == 512 && reported.total == 2048)
        #expect(try probe.progress() == 0.25)

        activity.end()
        #expect(activity.isEnded)
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)

        activity.end()
        activity.report(completed: 1, total: 2)
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
        #expect(problems.all.isEmpty, "ending twice and reporting after the end are harmless: \(problems.all)")
    }

    @Test func reportBeyondTheTotalIsClampedNotRefused() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        let activity = client.begin("overshoot")
        activity.report(completed: 5000, total: 1000)
        await client.flush()
        let seen = try #require(try probe.activity("overshoot"))
        #expect(seen.completed == 1000 && seen.total == 1000)
        activity.end()
        await client.flush()
        #expect(problems.all.isEmpty)
    }

    @Test func activitiesOfOneClientAreSeparate() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()

        let first = client.begin("first")
        let second = client.begin("second")
        first.report(completed: 10, total: 100)
        second.report(completed: 30, total: 100)
        await client.flush()
        #expect(try probe.activities().map(\.label) == ["first", "second"])
        #expect(try probe.progress() == 0.2)
        first.end()
        await client.flush()
        #expect(try probe.activities().map(\.label) == ["second"])
        second.end()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func anActivityReleasedWithoutEndEndsItself() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        var activity: Activity? = client.begin("forgotten")
        await client.flush()
        #expect(try probe.activity("forgotten") != nil)

        activity = nil
        _ = activity
        await client.flush()
        try await waitUntil("the released activity to leave the service's Activities") {
            try probe.activities().isEmpty
        }
        #expect(try probe.count() == 0)
        #expect(problems.all.isEmpty)
    }

    @Test func anActivityReleasedBeforeTheServiceAnsweredStillEnds() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()

        _ = client.begin("fleeting")
        await client.flush()
        try await waitUntil("the fleeting activity to be gone") {
            try probe.activities().isEmpty && probe.count() == 0
        }
    }

    @Test func aLabelTooLongIsCutToTheServicesLimit() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        let tooLong = client.begin(String(repeating: "é", count: 200))
        tooLong.report(completed: 1, total: 2)
        await client.flush()
        #expect(problems.all.isEmpty, "\(problems.all)")
        let label = try #require(try probe.activities().first?.label)
        #expect(label.utf8.count == NetActivityBus.Limits.labelBytes)
        #expect(label == String(repeating: "é", count: NetActivityBus.Limits.labelBytes / 2))
        tooLong.end()
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func anActivityPastTheServicesLimitIsReportedAndStaysLocal() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        let held = (0..<NetActivityBus.Limits.activitiesPerOwner).map { client.begin("held \($0)") }
        let refused = client.begin("one too many")
        refused.report(completed: 1, total: 2)
        await client.flush()
        #expect(problems.all.count == 1, "\(problems.all)")
        #expect(problems.all.first?.contains("cannot track 'one too many'") == true, "\(problems.all)")
        #expect(try probe.count() == UInt32(NetActivityBus.Limits.activitiesPerOwner))
        refused.end()
        for activity in held { activity.end() }
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(problems.all.count == 1, "\(problems.all)")
    }

    @Test func anActivityOutlivesItsClient() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        var client: NetActivityClient? = service.client(ProblemLog())
        let activity = try #require(client?.begin("outliving"))
        await client?.flush()
        client = nil
        _ = client

        activity.report(completed: 2, total: 8)
        try await waitUntil("the activity's report after its client was released") {
            try probe.activity("outliving")?.completed == 2
        }
        activity.end()
        try await waitUntil("the activity to end after its client was released") {
            try probe.activities().isEmpty
        }
    }

    // MARK: - tracking(_:_:)

    @Test func trackingEndsOnReturn() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()

        let result = try await client.tracking("returns") { activity in
            activity.report(completed: 1, total: 4)
            await client.flush()
            let seen = try #require(try probe.activity("returns"))
            #expect(seen.completed == 1 && seen.total == 4)
            return 42
        }
        #expect(result == 42)
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    struct Boom: Error {}

    @Test func trackingEndsOnThrow() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()

        await #expect(throws: Boom.self) {
            try await client.tracking("throws") { _ in
                await client.flush()
                #expect(try probe.activity("throws") != nil)
                throw Boom()
            }
        }
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test func trackingEndsAsSoonAsTheTaskIsCancelled() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let started = Gate()
        let release = Gate()
        let bodyFinished = Gate()

        let task = Task {
            await client.tracking("cancelled") { activity in
                started.open()
                // Suspended until the test lets go, whatever happens to the task meanwhile.
                await release.wait()
                bodyFinished.open()
                return activity.isEnded
            }
        }
        await started.wait()
        await client.flush()
        #expect(try probe.activity("cancelled") != nil)

        task.cancel()
        await client.flush()
        try await waitUntil("the cancelled task's activity to leave the service") {
            try probe.activities().isEmpty
        }
        #expect(!bodyFinished.isOpen, "the activity ended while the body was still suspended")

        release.open()
        let endedInsideBody = await task.value
        #expect(endedInsideBody, "the body sees its activity as ended after cancellation")
        #expect(try probe.count() == 0)
    }

    @Test func trackingInAnAlreadyCancelledTaskEndsAtOnce() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let started = Gate()

        let task = Task {
            await started.wait()
            return await client.tracking("born cancelled") { activity in activity.isEnded }
        }
        task.cancel()
        started.open()
        #expect(await task.value)
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    // MARK: - snapshot()

    @Test func snapshotIsTheServiceState() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())

        client.push()
        let activity = client.begin("snap")
        activity.report(completed: 3, total: 4)
        await client.flush()
        let state = await client.snapshot()
        #expect(state.serviceAvailable)
        #expect(state.active)
        #expect(state.count == 2)
        #expect(state.progress == 0.75)
        #expect(state.labels == ["snap"])
        activity.end()
        client.pop()
        await client.flush()
    }
}
