import BusTestSupport
import Foundation
import NetActivity
import Testing

/// The README's library example, word for word but for the client's construction.
func readmeExample(address: String) async throws {
    let indicator = NetActivityClient(bus: .address(address))   // NetActivityClient.shared in the README
    indicator.push(); defer { indicator.pop() }       // a connection you manage yourself
    await indicator.tracking("Sync feeds") { activity in
        activity.report(completed: 512, total: 2048)
    }
    for await state in indicator.states() { print(state.active, state.count); break }
}

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRunsAndLeavesNothingBehind() async throws {
        let service = try ServiceOnBus()
        let probe = try service.probe()
        try await readmeExample(address: service.address)
        // The deferred pop is the last thing the released client sends.
        try await eventually("the example's push to be popped") {
            try probe.count() == 0 && probe.activities().isEmpty
        }
    }
}
