import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract
import Testing

/// Thousands of random calls from raw clients, each checked against what the contract
/// requires; then the service must be up with exactly the state the valid calls produced.
///
/// Clients take turns, each sending a pipelined batch, so the order in which the service handles
/// calls (and therefore every expected reply) is known. `NETACTIVITY_SEED` replays a run;
/// `NETACTIVITY_SOAK=1` sends 100,000 random calls instead of 3,000 and fills the shared counter
/// to its cap.
@Suite(.system, .tags(.system), .timeLimit(.minutes(10))) struct FuzzTests {
    @Test func randomCallsGetTheContractsRepliesAndLeaveExactlyTheirEffect() throws {
        let seed = Scale.seed()
        let service = try ServiceDaemon([], leakChecking: true)
        var fuzz = Fuzzer(seed: seed, clients: try (0..<3).map { _ in try service.probe() })
        // A bystander whose activities the fuzzing clients may only be refused.
        var bystanders = [try service.probe()]
        try fuzz.run(bystanders[0], (0..<5).map { _ in try ServiceProbe.methodCall("BeginActivity", [.string("bystander")]) })

        let clock = ContinuousClock()
        let started = clock.now
        try fuzz.runRandom(calls: Scale.pick(3_000, soak: 100_000))
        try fuzz.fillToTheOwnerLimit()
        if Scale.soak { try fuzz.fillTheSharedCounter() }
        try fuzz.abusePeer()
        let hugeStarted = clock.now
        try fuzz.sendHugeLabels()
        let elapsed = clock.now - started
        let context = "seed \(seed), \(fuzz.sent) calls"

        #expect(
            fuzz.peerDeviations.isEmpty,
            "\(fuzz.peerDeviations.count) Peer calls, first: \(fuzz.peerDeviations.prefix(3))")
        #expect(
            fuzz.mismatches.isEmpty,
            "\(context): \(fuzz.mismatches.count) replies broke the contract, first: \(fuzz.mismatches.prefix(10))")
        #expect(service.process.isRunning, "\(context): netactivityd died: \(service.log)")
        let probe = try service.probe()
        try probe.ping()
        try fuzz.expectServiceState(probe, context)

        // The clients leave: their activities end, the shared counter stays.
        for client in fuzz.clients + bystanders {
            fuzz.model.release(owner: client.uniqueName)
        }
        fuzz.clients.removeAll()
        bystanders.removeAll()
        try waitUntil("the departed clients' activities to end", timeout: .seconds(20)) {
            try probe.activities().isEmpty
        }
        #expect(try probe.count() == fuzz.model.sharedCount, "\(context)")
        try probe.ping()
        try expectCleanExit(service)

        let errors = fuzz.errorNames.sorted { $0.value > $1.value }
            .map { "\($0.key.rawValue.split(separator: ".").last ?? ""): \($0.value)" }
        print("fuzz \(context) in \(elapsed) (huge labels \(clock.now - hugeStarted)), \(fuzz.skipped) not encodable; "
            + "errors: \(errors.joined(separator: ", "))")
    }
}
