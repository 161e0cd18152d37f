import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

/// The README's quick start on a given bus, its pop deferred; `ReadmeTests` runs the README's
/// own block, and this checks what the service heard from it.
func readmeExample(address: String) async throws {
    let indicator = NetActivityClient(bus: .address(address))   // NetActivityClient.shared in the README
    indicator.push(); defer { indicator.pop() }       // a connection you manage yourself
    await indicator.tracking("Sync feeds") { activity in
        activity.report(completed: 512, total: 2048)
    }
    for await state in indicator.states() { print(state.active, state.count); break }
}

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ReadmeExampleTests {
    @Test func theReadmeExampleReachesTheServiceAndLeavesNothingBehind() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        try probe.subscribe()
        try probe.connection.addMatch(
            "type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded',"
                + "path='\(NetActivityBus.path)'")
        try await readmeExample(address: service.address)
        // The deferred pop is the last thing the released client sends.
        try await waitUntil("the example's push to be popped") {
            try probe.count() == 0 && probe.activities().isEmpty
        }

        // What the service announced meanwhile, queued on the probe's connection: the push and
        // the tracked activity, not just a service that never heard of the example.
        var counts: [UInt32] = []
        var labels: [String] = []
        while let message = probe.nextMessage(timeout: .milliseconds(200)) {
            if let count = serviceProperties(in: message)?["Count"]?.uint32 { counts.append(count) }
            if message.isSignal(.objectManager, "InterfacesAdded"), let arguments = try? message.arguments(),
                arguments.count == 2,
                let interfaces = arguments[1].stringKeyedEntries,
                let properties = interfaces[NetActivityBus.activityInterface.rawValue]?.stringKeyedEntries,
                let label = properties["Label"]?.unwrapped?.string
            {
                labels.append(label)
            }
        }
        #expect(counts.contains { $0 >= 1 }, "the service never counted the example's push or activity: \(counts)")
        #expect(counts.last == 0, "the last Count announced: \(counts)")
        // The library's push() shows as an activity of its own.
        #expect(labels.sorted() == [NetActivityClient.pushLabel, "Sync feeds"].sorted(), "published: \(labels)")
    }
}
