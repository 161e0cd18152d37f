import BusTestSupport
import Foundation
import StackTestSupport
import Testing

/// The whole stack (`Stack`: service, bridge with every source, tray, browser and host, two
/// watchers, the sources' clients) on one private bus, through every fault it must survive, each
/// several times in an order drawn from a printed seed. After each one, within
/// `recoveryLimit`, every part is back and every live transfer is shown again exactly once,
/// with its label, application and bytes, by the service, both watchers and the tray; no
/// watcher ever shows a state that never existed; nothing of a part that died is left, nor of
/// the stack once it is stopped.
///
/// `NETACTIVITY_STACK_SEED=N` replays an order; `NETACTIVITY_SOAK=1` repeats each fault 5
/// times instead of 2.
@Suite(
    .system, .tags(.system), .timeLimit(.minutes(10)),
    .enabled(
        if: TrafficNetwork.unavailable == nil && PackageKitDaemon.unavailable == nil,
        Comment(rawValue: TrafficNetwork.unavailable ?? PackageKitDaemon.unavailable ?? "")))
struct StackFaultTests {
    /// How long a part may take to come back after a fault.
    static let recoveryLimit = Duration.seconds(20)

    @Test func everyPartComesBackAfterEachFaultInASeededOrder() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["NETACTIVITY_STACK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        let repetitions = environment["NETACTIVITY_SOAK"] == "1" ? 5 : 2
        var generator = SeededGenerator(seed: seed)
        let faults = StackFault.allCases.flatMap { Array(repeating: $0, count: repetitions) }.shuffled(using: &generator)
        print("stack: seed \(seed) (NETACTIVITY_STACK_SEED=\(seed) replays it), \(faults.count) faults")

        let clock = ContinuousClock()
        let started = clock.now
        let stack = try Stack()
        print("stack: every part up in \(format(clock.now - started)), GNOME Shell \(stack.gnome == nil ? "not installed here" : "with them")")
        var recoveries: [StackFault: [Duration]] = [:]
        for (number, fault) in faults.enumerated() {
            let done = try stack.inject(fault)
            let took = try stack.waitUntilRecovered(timeout: Self.recoveryLimit)
            recoveries[fault, default: []].append(took)
            print("stack: fault \(number + 1)/\(faults.count) \(fault.rawValue) (\(done)): recovered in \(format(took))")
        }
        for fault in StackFault.allCases {
            let times = recoveries[fault, default: []]
            print("stack: \(fault.rawValue): worst \(format(times.max() ?? .zero)) of \(times.count)")
        }
        if !stack.browserEndings.isEmpty {
            print("stack: the browser ended on its own \(stack.browserEndings.count) times (\(stack.browserEndings)); started again")
        }
        #expect(stack.watcherProblems.isEmpty, "\(stack.watcherProblems.prefix(10))")
        let left = try stack.stopAndFindLeftovers()
        #expect(left.isEmpty, "still running after the stack stopped: \(left)")
        print("stack: \(format(clock.now - started)) in all")
    }

    private func format(_ duration: Duration) -> String {
        String(format: "%.2f s", duration.seconds)
    }
}
