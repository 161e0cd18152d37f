import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityTestSupport
import NetActivityTray
import Testing

/// `FollowedServices.observe(on:)`, the merged state `watch` and the tray show.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct FollowedServicesTests {
    @Test func aSlowHandlerGetsTheLatestStateInsteadOfABacklog() throws {
        let service = try ServiceDaemon()
        let loop = try EventLoop()
        let counts = Locked<[Int]>([])
        let merged = FollowedServices(session: .address(service.address), system: nil)
            .observe(on: loop, problems: { _ in }) { state in
                counts.withLock { $0.append(state.activities.count) }
                // A handler slower than the states come (a long line written to a slow pipe).
                Thread.sleep(forTimeInterval: 0.05)
            }
        let running = try RunningLoop(loop)
        defer {
            loop.post { merged.cancel() }
            try? running.stop()
        }
        try waitUntil("the first state") { !counts.withLock(\.isEmpty) }

        // One at a time, so that each InterfacesAdded arrives, and becomes a state, on its own.
        let probe = try service.probe()
        for index in 0..<200 { _ = try probe.begin("activity \(index)") }

        try waitUntil("a state with all 200 activities") { counts.withLock { $0.last } == 200 }
        let seen = counts.withLock { $0 }
        // Queued one by one, 200 states would take the handler 10 s; the latest waits instead.
        #expect(seen.count < 40, "\(seen.count) states reached the handler: \(seen)")
    }
}
