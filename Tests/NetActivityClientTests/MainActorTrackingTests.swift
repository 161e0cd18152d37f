import BusTestSupport
import NetActivity
import NetActivityTestSupport
import Testing

/// A `@MainActor` view model calling `tracking` and touching its own state inside the body:
/// this file compiling in Swift 6 language mode is the proof; the test runs it too.
@MainActor final class FeedsModel {
    private(set) var items: [String] = []
    private(set) var lastProgress: (UInt64, UInt64)?
    let client: NetActivityClient

    init(client: NetActivityClient) {
        self.client = client
    }

    func refresh() async throws {
        try await client.tracking("Sync feeds") { activity in
            activity.report(completed: 1, total: 2)
            items.append("first")  // main-actor state, inside the body
            try await Task.sleep(for: .milliseconds(1))
            activity.report(completed: 2, total: 2)
            lastProgress = activity.progress
        }
    }
}

/// Any other actor works the same way.
actor Syncer {
    var runs = 0
    func sync(_ client: NetActivityClient) async {
        await client.tracking("Sync") { _ in runs += 1 }
    }
}

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct MainActorTrackingTests {
    @Test @MainActor func aMainActorClassCallsTracking() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let model = FeedsModel(client: client)
        try await model.refresh()
        #expect(model.items == ["first"])
        #expect(model.lastProgress.map { [$0.0, $0.1] } == [2, 2])
        let syncer = Syncer()
        await syncer.sync(client)
        #expect(await syncer.runs == 1)
        await client.flush()
        #expect(try service.probe().count() == 0)
    }
}
