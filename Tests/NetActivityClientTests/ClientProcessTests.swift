import BusTestSupport
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An app built against `NetActivity` alone (`na-idleclient`), as a separate process.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientProcessTests {
    @Test func anAppKilledWhileHoldingAPushLeavesCountZeroWithinASecond() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let app = try ChildProcess(try builtProduct("na-idleclient"), [service.address, "push"])
        defer { if app.isRunning { app.send(signal: SIGKILL) } }
        #expect(try await onThread { try app.readLine(timeout: .seconds(10)) } == "ready")
        try await waitUntil("the app's push at the service") {
            try probe.activities().map(\.label) == [NetActivityClient.pushLabel]
        }
        #expect(try probe.count() == 1)

        let clock = ContinuousClock()
        let killed = clock.now
        app.send(signal: SIGKILL)
        try await waitUntil("Count 0 after kill -9", timeout: .seconds(1)) { try probe.count() == 0 }
        print("kill -9 with a push held: Count 0 after \(clock.now - killed)")
    }

    @Test func anIdleAppHoldingAClientStaysSmall() async throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let app = try ChildProcess(try builtProduct("na-idleclient"), [service.address])
        defer { if app.isRunning { app.send(signal: SIGKILL) } }
        #expect(try await onThread { try app.readLine(timeout: .seconds(10)) } == "ready")
        try await waitUntil("the idle app's activity at the service") { try probe.activity("idle client") != nil }
        try await Task.sleep(for: .milliseconds(300))
        let rss = try residentSetSize(of: app.pid)
        print("idle app holding a NetActivity client: RSS \(rss / 1024) KiB")
        // The goal, under 12 MiB, is the release build's (10.6 MiB, docs/benchmarks.md); this
        // debug build carries about 1.2 MiB more code, so its bound leaves room for that alone.
        #expect(rss > 0 && rss < 14 * 1024 * 1024, "RSS \(rss / 1024) KiB")
        let maps = (try? String(contentsOfFile: "/proc/\(app.pid)/maps", encoding: .utf8)) ?? ""
        #expect(!maps.contains("libFoundation"), "the core library loads no Foundation")
        #expect(!maps.contains("libcurl"), "the core library loads no libcurl")
    }
}
