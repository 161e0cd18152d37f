import BusTestSupport
import Foundation
import StackTestSupport
import Testing

/// The whole stack (`Stack`) running and churning (`StackChurn`) for `SOAK_MINUTES` (2 by
/// default, as `make test` runs it; `make soak` runs 60), its long-lived parts sampled
/// (`StackSampler`): each minute in a run of 10 minutes or more, every 10 s in a shorter one.
///
/// Passes when, after the warm-up (5 minutes, or half a shorter run), each part's RSS grew by
/// less than 1 MB and its descriptors and threads did not grow; no part was replaced; no watcher
/// showed a state that never existed; both watchers showed every short KDE job; after the churn
/// the stack shows exactly what is live, as after a fault; and nothing is left once it stops.
/// Prints the samples as a table.
@Suite(
    .system, .tags(.system), .timeLimit(.minutes(90)),
    .enabled(
        if: TrafficNetwork.unavailable == nil && PackageKitDaemon.unavailable == nil,
        Comment(rawValue: TrafficNetwork.unavailable ?? PackageKitDaemon.unavailable ?? "")))
struct StackSoakTests {
    @Test func everyLongLivedPartStaysFlatUnderChurn() throws {
        let environment = ProcessInfo.processInfo.environment
        let minutes = environment["SOAK_MINUTES"].flatMap(Double.init) ?? 2
        let seed = environment["NETACTIVITY_STACK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        let duration = Duration.seconds(minutes * 60)
        let interval: Duration = minutes >= 10 ? .seconds(60) : .seconds(10)
        let warmUp: Duration = minutes >= 10 ? .seconds(300) : duration / 2
        // One launcher step every 10 s: up, up, hidden, shown again at 0.25, ...; the last 0.25.
        let cycles = Int(minutes * 60 / 40) + 1
        let steps = ["progress=0.25,visible=1"]
            + Array(repeating: ["progress=0.5,visible=1", "progress=0.75,visible=1", "visible=0", "progress=0.25,visible=1"], count: cycles)
            .flatMap { $0 }
        print("soak: \(minutes) min, seed \(seed), a sample every \(Int(interval.seconds)) s, warm-up \(Int(warmUp.seconds)) s")

        let stack = try Stack(downloads: Int(minutes * 3) + 2, downloadEvery: 20, launcherSteps: steps)
        stack.transientPrefixes = StackChurn.labelPrefixes
        let churn = StackChurn(stack, seed: seed)
        let sampler = StackSampler()
        let clock = ContinuousClock()
        let start = clock.now
        var nextSample = start
        while clock.now - start < duration {
            if clock.now >= nextSample {
                sampler.sample(try stack.longLivedProcesses(), elapsed: clock.now - start)
                nextSample += interval
            }
            try churn.tick()
            try stack.readWatchers()
            Thread.sleep(forTimeInterval: 0.1)
        }
        sampler.sample(try stack.longLivedProcesses(), elapsed: clock.now - start)
        try churn.stop()
        // The launcher app's steps not yet taken: it ends shown at 0.25.
        for _ in (churn.counts["launcher updates"] ?? 0)..<(steps.count - 1) {
            stack.launcherApp.process.send(signal: SIGUSR1)
            Thread.sleep(forTimeInterval: 0.2)
        }
        try stack.waitUntilRecovered(timeout: .seconds(60))
        print(sampler.table(warmUp: warmUp))
        print("soak: \(churn.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        let problems = sampler.problems(warmUp: warmUp)
        #expect(problems.isEmpty, "\(problems)")
        #expect(stack.watcherProblems.isEmpty, "\(stack.watcherProblems.prefix(10))")
        // Each short KDE job lasts seconds: every one was served, and both watchers showed it.
        let moves = churn.counts["KDE jobs", default: 0]
        for watcher in stack.watchers {
            let shown = stack.shownMoves[watcher.kind, default: []]
            #expect(shown.count == moves, "the \(watcher.kind) watcher showed \(shown.count) of the \(moves) short KDE jobs: \(shown.sorted())")
        }
        let left = try stack.stopAndFindLeftovers()
        #expect(left.isEmpty, "still running after the stack stopped: \(left)")
    }
}
