import BusTestSupport
import NetActivity
import NetActivityTestSupport
import Testing

/// docs/library.md's merge example, word for word but for the clients' construction.
func readmeMergeExample(session: String, system: String) async -> IndicatorSnapshot {
    let both = IndicatorSnapshot.merging(
        session: await NetActivityClient(bus: .address(session)).snapshot(),   // NetActivityClient.shared
        system: await NetActivityClient(bus: .address(system)).snapshot())     // NetActivityClient(bus: .system)
    print(both.count, both.activities.map(\.title))   // the system's titled "system: Apt — …"
    return both
}

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ReadmeMergeExampleTests {
    @Test func theMergeExampleSumsAndMarks() async throws {
        let both = try TwoServices()
        try both.session.probe().call("Push")
        let systemProbe = try both.system.probe()
        _ = try systemProbe.begin("Upgrade")
        let merged = await readmeMergeExample(session: both.session.address, system: both.system.address)
        #expect(merged.count == 2)
        #expect(merged.activities.map(\.bus) == [.system])
        #expect(merged.activities.first?.title.hasPrefix("system: ") == true)

        let withoutSystem = await readmeMergeExample(
            session: both.session.address, system: "unix:path=/nonexistent/netactivity-test/system_bus_socket")
        #expect(withoutSystem.count == 1 && withoutSystem.serviceAvailable && withoutSystem.activities.isEmpty)
    }
}
