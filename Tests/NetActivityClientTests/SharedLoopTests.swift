import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityTestSupport
import Testing

/// A client on the program's own `EventLoop` (`NetActivityClient(bus:sharing:)`, as `netactivity
/// bridge` makes it): reports made on the loop's thread and from other threads reach the service,
/// and nothing runs while the loop does not.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SharedLoopTests {
    @Test func reportsMadeOnTheLoopAndOffItReachTheService() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let loop = try EventLoop()
        let client = NetActivityClient(bus: .address(service.address), sharing: loop, problems: ProblemLog().handler)
        // Begun before the loop runs: held until it does.
        let early = client.begin("before the loop ran")
        early.report(completed: 10, total: 40)
        #expect(try probe.activity("before the loop ran") == nil)

        let running = try RunningLoop(loop)
        defer { try? running.stop() }
        await client.flush()
        #expect(try probe.activity("before the loop ran")?.completed == 10)

        let onLoop = Locked<Activity?>(nil)
        loop.post {
            let activity = client.begin("on the loop")
            activity.report(completed: 512, total: 2048)
            onLoop.withLock { $0 = activity }
        }
        try await waitUntil("the activity begun on the loop") { try probe.activity("on the loop")?.completed == 512 }
        early.end()
        onLoop.withLock { $0?.end() }
        await client.flush()
        #expect(try probe.count() == 0)
    }
}
