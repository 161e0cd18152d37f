import BusTestSupport
import DBus
import Dispatch
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import Testing

/// The library used from many tasks and threads at once; `swift test --sanitize=thread
/// --filter ClientConcurrencyTests` runs just these.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientConcurrencyTests {
    @Test func manyTasksBeginningReportingAndEndingLeaveNothingBehind() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()

        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index.isMultiple(of: 3) { client.push() }
                    let activity = client.begin("task \(index)")
                    for step in 1...4 {
                        activity.report(completed: UInt64(step * 256), total: 1024)
                        await Task.yield()
                    }
                    if index.isMultiple(of: 5) {
                        activity.end()
                        activity.end()
                    } else if index.isMultiple(of: 7) {
                        await client.tracking("nested \(index)") { _ in await Task.yield() }
                        activity.end()
                    } else {
                        activity.end()
                    }
                    if index.isMultiple(of: 3) { client.pop() }
                }
            }
        }
        await client.flush()
        try await waitUntil("Count 0 and no activities after 200 tasks") {
            try probe.count() == 0 && probe.activities().isEmpty
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func manyLiveActivitiesAtOnceAreAllCounted() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()

        let activities = await withTaskGroup(of: Activity.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let activity = client.begin("live \(index)")
                    activity.report(completed: 1, total: 2)
                    return activity
                }
            }
            var collected: [Activity] = []
            for await activity in group { collected.append(activity) }
            return collected
        }
        await client.flush()
        #expect(try probe.count() == 100)
        #expect(Set(try probe.activities().map(\.label)) == Set((0..<100).map { "live \($0)" }))
        #expect(try probe.progress() == 0.5)

        await withTaskGroup(of: Void.self) { group in
            for activity in activities { group.addTask { activity.end() } }
        }
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func threadsAndObserversTogether() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { !$0.isEmpty }

        // Plain threads as well as tasks: the API is Sendable, not tied to Swift concurrency.
        try await onThread {
            DispatchQueue.concurrentPerform(iterations: 64) { index in
                client.push()
                let activity = client.begin("thread \(index)")
                activity.report(completed: UInt64(index), total: 64)
                activity.end()
                client.pop()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    // Observers coming and going while the state changes.
                    for await _ in client.states() { break }
                    _ = await client.snapshot()
                }
            }
            for index in 0..<50 {
                group.addTask {
                    _ = client.begin("dropped \(index)")
                }
            }
        }
        await client.flush()
        try await waitUntil("Count 0 and no activities") {
            try probe.count() == 0 && probe.activities().isEmpty
        }
        try await recorder.wait(for: "a final idle state") { $0.last?.count == 0 && $0.last?.active == false }
        #expect(recorder.states.contains { $0.count > 0 }, "the observer saw the activity")
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func clientsCreatedAndReleasedConcurrently() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let address = service.address

        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let client = NetActivityClient(bus: .address(address), problems: { _ in })
                    client.push()
                    let activity = client.begin("client \(index)")
                    activity.report(completed: 1, total: 1)
                    await client.flush()
                    activity.end()
                    client.pop()
                    await client.flush()
                }
            }
        }
        try await waitUntil("every client's pushes and activities to be gone") {
            try probe.count() == 0 && probe.activities().isEmpty
        }
    }

    @Test func concurrentFlushesAllReturn() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    client.push()
                    await client.flush()
                    client.pop()
                    if index.isMultiple(of: 2) { await client.flush() }
                }
            }
        }
        await client.flush()
        #expect(try service.probe().count() == 0)
    }
}
