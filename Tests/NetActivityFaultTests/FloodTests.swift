import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract
import Testing

/// Push/Pop as fast as eight connections can pipeline them: the service's memory stays flat,
/// subscribers get throttled Count signals rather than one per call, and the final state is
/// exact.
@Suite(.system, .tags(.system), .timeLimit(.minutes(10))) struct FloodTests {
    static let connections = 8
    /// Calls each connection keeps in flight.
    static let window = 128

    /// Whether a push is held throughout (Active stays true) or not (Active flips whenever the
    /// flooders' pushes all happen to be popped).
    enum Baseline: Int, CaseIterable, Sendable {
        case toggling = 0
        case steady = 1
    }

    @Test(arguments: Baseline.allCases)
    func aPushPopFloodKeepsMemoryFlatSignalsThrottledAndTheCountExact(_ baseline: Baseline) throws {
        let service = try ServiceDaemon([], leakChecking: true)  // the default 50 ms throttle
        let recorder = try SignalRecorder(address: service.address)
        let flooders = try (0..<Self.connections).map { _ in try service.probe() }
        let probe = try service.probe()
        let held = UInt32(baseline.rawValue)
        if baseline == .steady { try probe.call("Push") }

        try Self.flood(flooders, calls: 8_000)
        try recorder.waitForMergedCount(held)
        let warm = try service.residentBytes()

        let calls = Scale.pick(20_000, soak: 100_000)
        let signalsBefore = recorder.recorded.count
        let countSignalsBefore = recorder.countSignals
        let clock = ContinuousClock()
        let started = clock.now
        try Self.flood(flooders, calls: calls)
        let elapsed = clock.now - started
        try recorder.waitForMergedCount(held)
        let after = try service.residentBytes()

        #expect(try probe.count() == held)
        #expect(recorder.merged["Active"]?.bool == (held > 0))
        #expect(try probe.activities().isEmpty)
        try probe.ping()
        // A sanitizer's allocator keeps freed memory in quarantine: RSS says nothing there.
        #expect(
            Sanitizer.any || after < 2 * warm + 4 << 20,
            "RSS grew from \(warm >> 10) KiB after warm-up to \(after >> 10) KiB after \(calls) calls")
        let countSignals = recorder.countSignals - countSignalsBefore
        // One window (50 ms) opens per leading edge and its end sends at most one more.
        let windows = Int(elapsed / .milliseconds(50)) + 1
        #expect(countSignals <= 2 * windows + 2, "\(countSignals) Count signals in \(elapsed) (\(windows) windows)")
        #expect(countSignals * 20 < calls, "\(countSignals) Count signals for \(calls) calls")
        #expect(recorder.impossibleSignals.isEmpty, "\(recorder.impossibleSignals.prefix(5))")
        recorder.stop()
        try expectCleanExit(service)
        let rate = Double(calls) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        print("flood, \(baseline): \(calls) calls in \(elapsed) (\(Int(rate))/s), \(countSignals) Count signals, "
            + "\(recorder.recorded.count - signalsBefore) signals in all, RSS \(warm >> 10) KiB → \(after >> 10) KiB")
    }

    /// `calls` calls, Push and Pop in turn, split over the connections, each on a thread of its
    /// own keeping `window` calls in flight. Every call must succeed: each connection's Pop
    /// follows its own Push, so the shared counter is never 0 when a Pop arrives.
    static func flood(_ clients: [ServiceProbe], calls: Int) throws {
        let perClient = calls / clients.count / 2 * 2
        let failures = FailureList()
        let done = DispatchGroup()
        for client in clients {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                do {
                    try pump(client, calls: perClient)
                } catch {
                    failures.add("\(client.uniqueName): \(error)")
                }
            }
            thread.name = "flood \(client.uniqueName)"
            thread.start()
        }
        guard done.wait(timeout: .now() + 300) == .success else {
            throw BusTestError("the flood did not finish in 300 s")
        }
        if let first = failures.all.first {
            throw BusTestError("\(failures.all.count) flooders failed; first: \(first)")
        }
    }

    private static func pump(_ client: ServiceProbe, calls: Int) throws {
        var inFlight = Set<UInt32>()
        var sent = 0
        while sent < calls || !inFlight.isEmpty {
            while sent < calls, inFlight.count < window {
                inFlight.insert(try client.connection.send(try ServiceProbe.methodCall(sent % 2 == 0 ? "Push" : "Pop")))
                sent += 1
            }
            client.connection.flush()
            guard let reply = client.connection.readMessage(timeout: .seconds(30)) else {
                throw BusTestError("no reply within 30 s with \(inFlight.count) calls in flight")
            }
            guard inFlight.remove(reply.replySerial) != nil else { continue }
            if let error = reply.error { throw BusTestError("a call failed: \(error)") }
        }
    }
}

/// Failures collected from several threads.
final class FailureList: Sendable {
    private let failures = Locked<[String]>([])

    func add(_ failure: String) {
        failures.withLock { $0.append(failure) }
    }

    var all: [String] { failures.withLock { $0 } }
}
