import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityModel
import NetActivityService
import Testing

/// docs/interface.md, "Properties": PropertiesChanged only on real change, `Active` (and a
/// leading-edge `Count`) signalled before the reply of the call that caused it, the throttle,
/// and the `Visible` debounce: observed on the wire, from the real binary (ordering, the
/// throttle) and from the service in-process on a manual clock (the debounce's delays).
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SignalOrderingTests {
    // MARK: - Signal before reply

    @Test(arguments: ["0", "50", "1000"])
    func pushThatActivatesIsSignalledBeforeItsReply(throttleMilliseconds: String) throws {
        let service = try ServiceDaemon(throttled(throttleMilliseconds))
        let client = try service.probe()
        try client.subscribe()

        let exchange = try client.exchange("Push")

        #expect(exchange.reply.kind == .methodReturn, "Push failed: \(exchange.reply.error as Any)")
        // One signal carries Active and the leading-edge Count, and it comes before the reply.
        let activating = exchange.signalsBefore.first { $0["Active"] != nil }
        #expect(activating?["Active"] == .boolean(true), "signals before the reply: \(exchange.signalsBefore)")
        #expect(activating?["Count"] == .uint32(1), "leading-edge Count not in the Active signal: \(exchange.signalsBefore)")
        #expect(exchange.signalsAfter(within: .milliseconds(300)).allSatisfy { $0["Active"] == nil })
    }

    @Test(arguments: [0, 50])
    func popThatDeactivatesIsSignalledBeforeItsReply(throttleMilliseconds: Int) throws {
        let service = try InProcessService(settings: throttledSettings(throttleMilliseconds))
        let client = try service.probe()
        try client.call("Push")
        try client.subscribe()
        // Past the Push's throttle window (timed from before its reply), the Pop is a leading
        // edge whatever the throttle.
        service.advance(by: .milliseconds(200))
        _ = try service.settle(client)

        let exchange = try client.exchange("Pop")

        #expect(exchange.reply.kind == .methodReturn, "Pop failed: \(exchange.reply.error as Any)")
        let deactivating = exchange.signalsBefore.first { $0["Active"] != nil }
        #expect(deactivating?["Active"] == .boolean(false), "signals before the reply: \(exchange.signalsBefore)")
        #expect(deactivating?["Count"] == .uint32(0), "leading-edge Count not in the Active signal: \(exchange.signalsBefore)")
    }

    @Test func beginAndEndActivityAreSignalledBeforeTheirReplies() throws {
        let service = try InProcessService(settings: throttledSettings(50))
        let client = try service.probe()
        try client.subscribe()

        let begin = try client.exchange("BeginActivity", [.string("download")])
        let id = try #require(try begin.reply.arguments().first?.uint32, "BeginActivity: \(begin.reply.error as Any)")
        let activating = begin.signalsBefore.first { $0["Active"] != nil }
        #expect(activating?["Active"] == .boolean(true), "signals before the reply: \(begin.signalsBefore)")
        #expect(activating?["Count"] == .uint32(1))
        #expect(activating?["Activities"] == invalidated)

        service.advance(by: .milliseconds(200))  // the Begin's window closes
        _ = try service.settle(client)
        let end = try client.exchange("EndActivity", [.uint32(id)])
        #expect(end.reply.kind == .methodReturn, "EndActivity failed: \(end.reply.error as Any)")
        let deactivating = end.signalsBefore.first { $0["Active"] != nil }
        #expect(deactivating?["Active"] == .boolean(false), "signals before the reply: \(end.signalsBefore)")
        #expect(deactivating?["Count"] == .uint32(0))
        #expect(deactivating?["Activities"] == invalidated)
    }

    // MARK: - Only real changes

    @Test func secondPushAnnouncesCountButNotActive() throws {
        let service = try ServiceDaemon()  // throttle 0, no debounce delays
        let client = try service.probe()
        try client.subscribe()

        let first = try client.exchange("Push")
        #expect(first.signalsBefore.contains { $0["Active"] == .boolean(true) })
        let second = try client.exchange("Push")

        #expect(second.signalsBefore.count == 1, "signals before the second Push's reply: \(second.signalsBefore)")
        #expect(second.signalsBefore.first?["Count"] == .uint32(2))
        #expect(second.signalsBefore.first?["Active"] == nil, "Active announced though it stayed true")
        #expect(second.signalsBefore.first?["Visible"] == nil, "Visible announced though it stayed true")
    }

    @Test func failingPopAnnouncesNothing() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try client.subscribe()

        let pop = try client.exchange("Pop")
        #expect(pop.reply.errorName == .notActive)
        #expect(pop.signalsBefore.isEmpty, "a failed Pop announced \(pop.signalsBefore)")

        // Anything the failed Pop had queued would arrive before the next change's signal.
        let push = try client.exchange("Push")
        #expect(push.signalsBefore.count == 1, "\(push.signalsBefore)")
        #expect(push.signalsBefore.first?["Active"] == .boolean(true))
        #expect(push.signalsBefore.first?["Count"] == .uint32(1))
    }

    @Test func updateWithTheSameProgressAnnouncesNothing() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("upload")
        try client.subscribe()

        let first = try client.exchange("UpdateActivity", [.uint32(id), .uint64(5), .uint64(10)])
        #expect(first.signalsBefore.first?["Progress"] == .double(0.5), "\(first.signalsBefore)")
        let repeated = try client.exchange("UpdateActivity", [.uint32(id), .uint64(5), .uint64(10)])
        #expect(repeated.reply.kind == .methodReturn)
        #expect(repeated.signalsBefore.isEmpty, "an update that changed nothing announced \(repeated.signalsBefore)")

        let push = try client.exchange("Push")
        #expect(push.signalsBefore.count == 1, "\(push.signalsBefore)")
        #expect(push.signalsBefore.first?.keys.sorted() == ["Count"], "\(push.signalsBefore)")
    }

    @Test func changesThatCancelOutWithinTheWindowAreNotAnnounced() throws {
        let service = try InProcessService(settings: throttledSettings(1_000))
        let observer = try service.probe()
        try observer.subscribe()
        let client = try service.probe()

        // Within one instant of the 1 s window: Count goes 1, 2, 1.
        let replies = try client.sendAll(["Push", "Push", "Pop"])
        #expect(replies.allSatisfy { $0.kind == .methodReturn })

        // The trailing edge finds Count back at its announced value: nothing to send.
        service.advance(by: .milliseconds(2_500))
        let signals = try service.settle(observer).compactMap(serviceProperties(in:))
        let counts = signals.compactMap { $0["Count"] }
        #expect(counts == [.uint32(1)], "Count signals: \(signals)")
        #expect(signals.count == 1, "signals: \(signals)")
    }
}

// MARK: - Throttle

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ThrottleTests {
    /// Ten thousand calls within one throttle window make one leading-edge Count and, when the
    /// window closes, one trailing Count with the final value: on the service's manual clock,
    /// which stands still through the flood, so the bound is exact rather than measured.
    @Test func floodOfTenThousandCallsIsThrottled() throws {
        let window = Duration.milliseconds(200)
        let service = try InProcessService(settings: throttledSettings(200))
        let observer = try service.probe()
        try observer.subscribe()
        let senders = [try service.probe(), try service.probe()]
        try observer.call("Push")  // Active stays true through the flood
        service.advance(by: window)
        _ = try service.settle(observer)

        // Each sender repeats Push, Push, Pop: Count never falls below 1 and ends at a value
        // no earlier moment had, so the trailing signal must carry exactly it.
        let rounds = 1_667
        let pattern: [MemberName] = ["Push", "Push", "Pop"]
        let calls = Array(repeating: pattern, count: rounds).flatMap { $0 }
        let finalCount = UInt32(1 + senders.count * rounds)
        var waiting: [[UInt32]] = []
        for sender in senders {
            waiting.append(try calls.map { try sender.send($0) })
        }
        for sender in senders { sender.connection.flush() }
        for (sender, serials) in zip(senders, waiting) {
            let replies = try sender.replies(to: serials, timeout: .seconds(120))
            let failed = replies.filter { $0.kind != .methodReturn }
            #expect(failed.isEmpty, "\(failed.count) calls failed, e.g. \(failed.first?.error as Any)")
        }
        #expect(senders.count * calls.count >= 10_000)

        // Within the window: the leading edge alone, however many calls came.
        let during = try service.settle(observer).compactMap(serviceProperties(in:))
        #expect(during.compactMap { $0["Count"] }.count == 1, "Count signals within the window: \(during)")
        // The window closes: one trailing Count, the final value; then nothing more.
        service.advance(by: window)
        let trailing = try service.settle(observer).compactMap(serviceProperties(in:))
        #expect(trailing.compactMap { $0["Count"] } == [.uint32(finalCount)], "after the window: \(trailing)")
        service.advance(by: window * 3)
        let after = try service.settle(observer).compactMap(serviceProperties(in:))
        #expect(after.allSatisfy { $0["Count"] == nil }, "after the trailing edge: \(after)")
        #expect(try observer.count() == finalCount)
        // Active never changed during the flood: it was announced only by the first Push.
        #expect((during + trailing + after).allSatisfy { $0["Active"] == nil }, "Active announced during the flood")
    }

    @Test func zeroWindowSendsEveryChange() throws {
        let service = try ServiceDaemon(throttled("0"))
        let observer = try service.probe()
        try observer.subscribe()
        let client = try service.probe()

        let calls = Array(repeating: "Push" as MemberName, count: 200) + Array(repeating: "Pop" as MemberName, count: 100)
        let replies = try client.sendAll(calls)
        #expect(replies.allSatisfy { $0.kind == .methodReturn })

        var counts: [UInt32] = []
        var actives: [Bool] = []
        while counts.count < calls.count, let changed = observer.nextPropertiesChanged(timeout: .seconds(30)) {
            if let count = changed["Count"]?.uint32 { counts.append(count) }
            if let active = changed["Active"]?.bool { actives.append(active) }
        }
        let expected = Array(UInt32(1)...200) + Array((UInt32(100)...199).reversed())
        #expect(counts == expected, "got \(counts.count) Count signals: \(counts.prefix(10))…\(counts.suffix(10))")
        #expect(actives == [true])
    }
}

// MARK: - Visible debounce

/// AFNetworking's anti-flicker rule, with the service in-process on a manual clock
/// (`InProcessService`): `activationDelay` 0.5 s and `completionDelay` 0.3 s, each checked a
/// millisecond before and at its deadline, with no real wait.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct VisibilityTests {
    static let settings = IndicatorSettings(
        throttle: .zero, activationDelay: .milliseconds(500), completionDelay: .milliseconds(300))

    /// The main object's PropertiesChanged among `messages`, in order.
    static func changes(_ messages: [Message]) -> [[String: Value]] {
        messages.compactMap(serviceProperties(in:))
    }

    @Test func activityShorterThanTheActivationDelayNeverShows() throws {
        let service = try InProcessService(settings: Self.settings)
        let observer = try service.probe()
        try observer.subscribe()
        let client = try service.probe()

        try client.call("Push")
        service.advance(by: .milliseconds(499))
        try client.call("Pop")
        service.advance(by: .seconds(5))

        let signals = Self.changes(try service.settle(observer))
        #expect(signals.compactMap { $0["Active"] } == [.boolean(true), .boolean(false)], "\(signals)")
        #expect(signals.allSatisfy { $0["Visible"] == nil }, "Visible flickered: \(signals)")
        #expect(try observer.property("Visible") == .boolean(false))
    }

    @Test func sustainedActivityShowsAfterTheActivationDelay() throws {
        let service = try InProcessService(settings: Self.settings)
        let client = try service.probe()
        try client.subscribe()

        let push = try client.exchange("Push")
        #expect(push.signalsBefore.allSatisfy { $0["Visible"] == nil }, "Visible at once: \(push.signalsBefore)")
        #expect(try client.property("Visible") == .boolean(false))
        service.advance(by: .milliseconds(499))
        #expect(Self.changes(try service.settle(client)).allSatisfy { $0["Visible"] == nil }, "shown early")

        service.advance(by: .milliseconds(1))
        #expect(Self.changes(try service.settle(client)).compactMap { $0["Visible"] } == [.boolean(true)])
        #expect(try client.property("Visible") == .boolean(true))
    }

    @Test func gapShorterThanTheCompletionDelayNeverHides() throws {
        let service = try InProcessService(settings: Self.settings)
        let observer = try service.probe()
        try observer.subscribe()
        let client = try service.probe()
        try client.call("Push")
        service.advance(by: .milliseconds(500))
        #expect(Self.changes(try service.settle(observer)).contains { $0["Visible"] == .boolean(true) })

        try client.call("Pop")
        service.advance(by: .milliseconds(299))
        try client.call("Push")
        service.advance(by: .seconds(5))

        let signals = Self.changes(try service.settle(observer))
        #expect(signals.compactMap { $0["Active"] } == [.boolean(false), .boolean(true)], "\(signals)")
        #expect(signals.allSatisfy { $0["Visible"] == nil }, "Visible flickered: \(signals)")
        #expect(try observer.property("Visible") == .boolean(true))
    }

    @Test func visibleTurnsFalseAfterTheCompletionDelay() throws {
        let service = try InProcessService(settings: Self.settings)
        let client = try service.probe()
        try client.subscribe()
        try client.call("Push")
        service.advance(by: .milliseconds(500))
        #expect(Self.changes(try service.settle(client)).contains { $0["Visible"] == .boolean(true) })

        let pop = try client.exchange("Pop")
        #expect(pop.signalsBefore.contains { $0["Active"] == .boolean(false) })
        #expect(pop.signalsBefore.allSatisfy { $0["Visible"] == nil }, "hidden at once: \(pop.signalsBefore)")
        service.advance(by: .milliseconds(299))
        #expect(Self.changes(try service.settle(client)).allSatisfy { $0["Visible"] == nil }, "hidden early")

        service.advance(by: .milliseconds(1))
        #expect(Self.changes(try service.settle(client)).compactMap { $0["Visible"] } == [.boolean(false)])
        #expect(try client.property("Visible") == .boolean(false))
    }
}

// MARK: - Arguments

/// Service arguments with the given throttle window and no debounce delays, so `Visible`
/// flips together with `Active` and never arrives late.
private func throttled(_ milliseconds: String) -> [String] {
    ["--throttle-ms", milliseconds, "--activation-delay", "0", "--completion-delay", "0"]
}

/// The same for a service in-process.
private func throttledSettings(_ milliseconds: Int) -> IndicatorSettings {
    IndicatorSettings(throttle: .milliseconds(milliseconds), activationDelay: .zero, completionDelay: .zero)
}
