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

/// `states()`: the current state first, then every change in order, across service restarts.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientStatesTests {
    @Test func theFirstStateIsTheCurrentOne() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        client.push()
        let activity = client.begin("already running")
        activity.report(completed: 1, total: 2)
        await client.flush()

        var iterator = client.states().makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.serviceAvailable)
        #expect(first.active)
        #expect(first.count == 2)
        #expect(first.progress == 0.5)
        #expect(first.labels == ["already running"])
        activity.end()
        client.pop()
        await client.flush()
    }

    @Test func aSecondObserverAlsoStartsWithTheCurrentState() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { !$0.isEmpty }

        client.push()
        try await recorder.wait(for: "count 1", after: 0) { $0.count == 1 }
        var iterator = client.states().makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.count == 1 && first.active)
        client.pop()
        await client.flush()
    }

    @Test func changesArriveInOrder() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        client.push()
        await client.flush()

        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { !$0.isEmpty }
        #expect(recorder.states.first?.count == 1)

        client.push()
        try await recorder.wait(for: "count 2", after: 0) { $0.count == 2 }
        client.pop()
        try await recorder.wait(for: "count 1 after 2") { states in
            guard let two = states.firstIndex(where: { $0.count == 2 }) else { return false }
            return states[two...].contains { $0.count == 1 }
        }
        // Another client's changes show too. Each is waited for: changes that arrive together
        // are published as one state, so two made back to back may show as their sum.
        var seen = recorder.states.count
        try probe.call("Push")
        try await recorder.wait(for: "another client's push", after: seen) { $0.count == 2 }
        seen = recorder.states.count
        try probe.call("Pop")
        try await recorder.wait(for: "another client's pop", after: seen) { $0.count == 1 }
        client.pop()
        try await recorder.wait(for: "count 0", after: 0) { $0.count == 0 && !$0.active }

        let counts = collapsingRepeats(recorder.states.map(\.count))
        #expect(counts == [1, 2, 1, 2, 1, 0], "counts in order: \(describe(recorder.states))")
        #expect(recorder.states.allSatisfy { $0.active == ($0.count > 0) })
    }

    @Test func activitiesAndProgressAreObserved() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { !$0.isEmpty }

        let activity = client.begin("observed")
        try await recorder.wait(for: "the activity", after: 0) { $0.activities.map(\.label) == ["observed"] }
        activity.report(completed: 25, total: 100)
        try await recorder.wait(for: "progress 0.25", after: 0) {
            $0.progress == 0.25 && $0.activities.first?.completed == 25
        }
        activity.end()
        try await recorder.wait(for: "the activity to end", after: 1) { $0.activities.isEmpty && $0.count == 0 }
        #expect(recorder.states.last?.progress == nil)
    }

    @Test func visibleFollowsTheServiceDelays() async throws {
        let service = try ServiceDaemon(
            ["--throttle-ms", "0", "--activation-delay", "0.3", "--completion-delay", "0.3"])
        let client = service.client(ProblemLog())
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { !$0.isEmpty }

        client.push()
        try await recorder.wait(for: "Visible after the activation delay", after: 0) { $0.visible }
        client.pop()
        try await recorder.wait(for: "Visible false after the completion delay") { states in
            guard let shown = states.firstIndex(where: \.visible) else { return false }
            return states[shown...].contains { !$0.visible && !$0.active }
        }

        let flags = collapsingRepeats(recorder.states.map { [$0.active, $0.visible] })
        #expect(
            flags == [[false, false], [true, false], [true, true], [false, true], [false, false]],
            "Active/Visible transitions: \(describe(recorder.states))")
    }

    @Test func theStreamShowsTheServiceGoingAndComingBack() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "the first state") { $0.first?.serviceAvailable == true }

        try await onThread { try service.stop(signal: SIGTERM) }
        try await recorder.wait(for: "an unavailable state", after: 0) { !$0.serviceAvailable }
        let unavailable = try #require(recorder.states.last)
        #expect(!unavailable.active && unavailable.count == 0 && unavailable.activities.isEmpty)
        let gone = recorder.states.count

        try await onThread { try service.start() }
        try await recorder.wait(for: "an available state from the new service", after: gone - 1) {
            $0.serviceAvailable
        }
        let probe = try service.probe()
        try probe.call("Push")
        try await recorder.wait(for: "count 1 from the new service", after: gone - 1) {
            $0.serviceAvailable && $0.count == 1
        }
        client.push()
        try await recorder.wait(for: "count 2 from the new service", after: gone - 1) { $0.count == 2 }
        client.pop()
        try probe.call("Pop")
        try await recorder.wait(for: "count 0 again", after: gone) { $0.serviceAvailable && $0.count == 0 }
    }

    @Test func aStreamOnABusWithoutTheServiceYieldsUnavailable() async throws {
        let service = try ServiceDaemon(startService: false)
        let problems = ProblemLog()
        let client = service.client(problems)
        var iterator = client.states().makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(!first.serviceAvailable)
        #expect(!first.active && first.count == 0)
    }

    @Test func endingTheIterationStopsTheStream() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        for _ in 0..<20 {
            for await state in client.states() {
                #expect(state.serviceAvailable)
                break
            }
        }
        client.push()
        await client.flush()
        #expect(await client.snapshot().count == 1)
        client.pop()
        await client.flush()
    }

    /// A client whose observer has come and gone, with the service showing two pushes.
    private func clientThatHasObserved(_ service: ServiceDaemon) async throws -> NetActivityClient {
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        try probe.call("Push")
        try probe.call("Push")
        let before = await client.snapshot()
        #expect(before.count == 2 && before.serviceAvailable)
        return client
    }

    @Test func aNewObserverWhileTheServiceIsGoneSeesItUnavailable() async throws {
        let service = try ServiceDaemon()
        let client = try await clientThatHasObserved(service)

        // Polled: a client may take a moment to hear of the service's departure.
        try await onThread { try service.stop(signal: SIGKILL) }
        var whileGone = await client.snapshot()
        try await waitUntil("a new observer to start from an unavailable state with no service, got \(describe([whileGone]))") {
            whileGone = await client.snapshot()
            return !whileGone.serviceAvailable && whileGone.count == 0
        }
    }

    @Test func aNewObserverAfterARestartSeesTheNewServiceNotTheOldOne() async throws {
        let service = try ServiceDaemon()
        let client = try await clientThatHasObserved(service)

        try await onThread { try service.stop(signal: SIGKILL) }
        try await onThread { try service.start() }
        var after = await client.snapshot()
        try await waitUntil("a new observer to start from the new instance's state (count 0), got \(describe([after]))") {
            after = await client.snapshot()
            return after.serviceAvailable && after.count == 0 && !after.active
        }
    }
}
