import BusTestSupport
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

/// Reports are coalesced in the client: one `UpdateActivity` in flight per activity, the
/// latest value always sent, nothing after the end. Counted by `dbus-monitor`, a foreign client.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ReportCoalescingTests {
    @Test func tenThousandReportsInATightLoopAreAtMostFiftyCalls() async throws {
        try requireTool("dbus-monitor")
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let activity = client.begin("tight loop")
        await client.flush()
        let monitor = try ChildProcess(
            "dbus-monitor",
            ["--address", service.address, "type='method_call',member='UpdateActivity'",
             "type='method_call',member='EndActivity'", "type='signal',member='NameAcquired'"])
        defer { monitor.send(signal: SIGTERM) }
        try await waitUntil("dbus-monitor to connect") { monitor.stdoutText.contains("NameAcquired") }

        for completed in 1...10_000 {
            activity.report(completed: UInt64(completed), total: 10_000)
        }
        await client.flush()
        #expect(try probe.activity("tight loop")?.completed == 10_000, "the last value reaches the service")
        // More reports, then the end at once: nothing stale may follow the end.
        for completed in 1...1_000 { activity.report(completed: UInt64(completed), total: 1_000_000) }
        activity.end()
        await client.flush()
        try await waitUntil("the EndActivity call at the monitor") { monitor.stdoutText.contains("member=EndActivity") }

        let calls = monitor.stdoutText.split(separator: "\n").filter { $0.hasPrefix("method call") }
        let updates = calls.prefix { $0.contains("member=UpdateActivity") }
        #expect(calls.last?.contains("member=EndActivity") == true, "EndActivity is the last call: \(calls)")
        #expect(calls.filter { $0.contains("member=EndActivity") }.count == 1)
        #expect(updates.count >= 1 && updates.count <= 50, "\(updates.count) UpdateActivity calls for 11,000 reports")
        #expect(try probe.count() == 0)
    }

    @Test func reportsFromManyThreadsEndWithTheLastValue() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let activity = client.begin("threads")
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<500 { activity.report(completed: UInt64(worker * 500 + step), total: 8_000) }
                }
            }
        }
        activity.report(completed: 7_999, total: 8_000)
        await client.flush()
        #expect(try probe.activity("threads")?.completed == 7_999)
        activity.end()
        await client.flush()
        #expect(try probe.count() == 0)
    }
}
