import Testing
@testable import NetActivityModel

/// Contract version 3 in the model: hints, fraction mode, the weighted `Progress`, and `Rate`
/// with its fall to 0, all on a manual clock.
struct Version3Tests {
    let clock = ManualClock()

    func makeIndicator(throttle: Duration = .milliseconds(50)) -> Indicator {
        Indicator(settings: .init(throttle: throttle, activationDelay: .zero, completionDelay: .zero), clock: clock)
    }

    // MARK: - Hints

    @Test func hintsAreKeptWithTheActivity() throws {
        var ledger = Ledger()
        let hints = ActivityHints(application: "org.gnome.Software", icon: "system-software-update", kind: .update)
        let id = try ledger.begin(owner: ":1.1", label: "Updates", started: 0, hints: hints)
        #expect(ledger.activity(id)?.hints == hints)
        let plain = try ledger.begin(owner: ":1.1", label: "plain", started: 0)
        #expect(ledger.activity(plain)?.hints == ActivityHints())
    }

    @Test(arguments: ["application", "icon"])
    func aHintOverTheLimitBeginsNothing(key: String) throws {
        var ledger = Ledger()
        let long = String(repeating: "é", count: 128)  // 256 bytes
        let hints = key == "application" ? ActivityHints(application: long) : ActivityHints(icon: long)
        let before = LedgerSnapshot(ledger)
        #expect(throws: LedgerError.hintTooLong(key: key, bytes: 256, limit: 255)) {
            try ledger.begin(owner: ":1.1", label: "x", started: 0, hints: hints)
        }
        #expect(LedgerSnapshot(ledger) == before)
        let fits = String(repeating: "a", count: 255)
        _ = try ledger.begin(owner: ":1.1", label: "x", started: 0, hints: ActivityHints(application: fits, icon: fits))
    }

    // MARK: - Fraction mode

    @Test func aFractionReplacesTheBytesUntilBytesAreReportedAgain() throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "x", started: 0)
        #expect(ledger.activity(id)?.fraction == -1)
        try ledger.update(id, by: ":1.1", completed: 10, total: 40)
        #expect(ledger.activity(id)?.fraction == 0.25)
        #expect(try ledger.updateFraction(id, by: ":1.1", fraction: 0.5))
        #expect(ledger.activity(id).map { ($0.completed, $0.total, $0.fraction) }! == (0, 0, 0.5))
        #expect(try !ledger.updateFraction(id, by: ":1.1", fraction: 0.5), "the same fraction again changes nothing")
        try ledger.update(id, by: ":1.1", completed: 30, total: 40)
        #expect(ledger.activity(id)?.fraction == 0.75)
        #expect(ledger.activity(id)?.reportedFraction == nil)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, -0.01, 1.01, -1])
    func aFractionOutsideZeroToOneChangesNothing(fraction: Double) throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "x", started: 0)
        try ledger.updateFraction(id, by: ":1.1", fraction: 0.3)
        let before = LedgerSnapshot(ledger)
        #expect(throws: LedgerError.self) { try ledger.updateFraction(id, by: ":1.1", fraction: fraction) }
        #expect(LedgerSnapshot(ledger) == before)
    }

    @Test func aFractionChecksTheIdAndTheOwnerFirst() throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "x", started: 0)
        #expect(throws: LedgerError.unknownActivity(99)) { try ledger.updateFraction(99, by: ":1.1", fraction: .nan) }
        #expect(throws: LedgerError.notOwner(id)) { try ledger.updateFraction(id, by: ":1.2", fraction: .nan) }
    }

    // MARK: - Progress

    @Test func fractionModeActivitiesWeighAsTheMeanByteActivity() throws {
        var ledger = Ledger()
        let a = try ledger.begin(owner: ":1.1", label: "a", started: 0)
        let b = try ledger.begin(owner: ":1.1", label: "b", started: 0)
        let f = try ledger.begin(owner: ":1.1", label: "f", started: 0)
        _ = try ledger.begin(owner: ":1.1", label: "unknown", started: 0)
        #expect(ledger.progress == -1)
        try ledger.updateFraction(f, by: ":1.1", fraction: 0.5)
        #expect(ledger.progress == 0.5, "with no byte activity a fraction weighs 1")
        try ledger.update(a, by: ":1.1", completed: 100, total: 400)
        try ledger.update(b, by: ":1.1", completed: 300, total: 1_200)
        // W = 1600 / 2 = 800: (400 + 800 · 0.5) / (1600 + 800)
        #expect(abs(ledger.progress - 800.0 / 2_400.0) < 1e-12)
        try ledger.end(f, by: ":1.1")
        #expect(ledger.progress == 400.0 / 1_600.0, "without fractions, version 2's Σcompleted / Σtotal exactly")
        try ledger.end(a, by: ":1.1")
        try ledger.end(b, by: ":1.1")
        #expect(ledger.progress == -1)
    }

    @Test func onlyFractionsGiveTheirMean() throws {
        var ledger = Ledger()
        for fraction in [0.2, 0.6] {
            let id = try ledger.begin(owner: ":1.1", label: "f", started: 0)
            try ledger.updateFraction(id, by: ":1.1", fraction: fraction)
        }
        #expect(abs(ledger.progress - 0.4) < 1e-12)
    }

    // MARK: - Rate

    @Test func theRateIsTheBytesOverTheTimeSinceTheFirstUpdate() throws {
        var indicator = makeIndicator(throttle: .zero)
        let id = try indicator.begin(owner: ":1.1", label: "x").id
        _ = try indicator.update(id, by: ":1.1", completed: 1_000, total: 100_000)
        #expect(indicator.ledger.activity(id)?.rate == 0, "one byte update gives no rate")
        clock.advance(by: .milliseconds(500))
        let second = try indicator.update(id, by: ":1.1", completed: 2_000, total: 100_000)
        #expect(indicator.ledger.activity(id)?.rate == 2_000)
        #expect(second.rate == 2_000)
        #expect(second.progressOf == [id])
        #expect(indicator.state.rate == 2_000)
    }

    @Test func theRateFollowsAChangeOfSpeedWithinTwoWindows() throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "x", started: 0)
        var bytes: UInt64 = 0
        // 1 MB/s for 10 s, then 100 kB/s, an update every 100 ms.
        for step in 0..<200 {
            bytes += step < 100 ? 100_000 : 10_000
            try ledger.update(id, by: ":1.1", completed: bytes, total: 0, at: Instant(nanoseconds: UInt64(step) * 100_000_000))
            if step == 99 { #expect(abs(ledger.rate - 1_000_000) < 1) }
        }
        #expect(abs(ledger.rate - 100_000) < 1, "3 s after the change only the new speed counts")
    }

    @Test func anUpdateThatMovesNoBytesKeepsTheRate() throws {
        var indicator = makeIndicator(throttle: .zero)
        let id = try indicator.begin(owner: ":1.1", label: "x").id
        _ = try indicator.update(id, by: ":1.1", completed: 0, total: 0)
        clock.advance(by: .seconds(1))
        _ = try indicator.update(id, by: ":1.1", completed: 4_000, total: 0)
        clock.advance(by: .seconds(3))
        _ = try indicator.update(id, by: ":1.1", completed: 4_000, total: 8_000)
        #expect(indicator.ledger.activity(id)?.rate == 4_000)
    }

    @Test func theRateFallsToZeroBetweenFiveAndSixSecondsWithoutBytesAndIsAnnounced() throws {
        var indicator = makeIndicator()
        let id = try indicator.begin(owner: ":1.1", label: "x").id
        _ = try indicator.update(id, by: ":1.1", completed: 0, total: 10_000)
        clock.advance(by: .seconds(1))
        _ = try indicator.update(id, by: ":1.1", completed: 1_000, total: 10_000)
        #expect(indicator.ledger.rate == 1_000)
        // Let the throttles' windows close, then only the stall is pending.
        clock.advance(by: .milliseconds(100))
        _ = indicator.advance()
        let deadline = try #require(indicator.nextDeadline)
        #expect(clock.now.duration(to: deadline) == .milliseconds(4_900), "5 s after the last bytes, no earlier")
        clock.advance(by: .milliseconds(4_899))
        #expect(indicator.advance().isEmpty)
        #expect(indicator.ledger.rate == 1_000)
        clock.advance(by: .milliseconds(1))
        let fall = indicator.advance()
        #expect(fall.progressOf == [id])
        #expect(fall.rate == 0)
        #expect(indicator.ledger.activity(id)?.rate == 0)
        // The fall opened the main object's throttle window: its end is the last wake-up.
        let windowEnd = try #require(indicator.nextDeadline)
        clock.advance(by: clock.now.duration(to: windowEnd))
        #expect(indicator.advance().isEmpty)
        #expect(indicator.nextDeadline == nil, "no timer once every rate is 0")
    }

    @Test func bytesThatKeepMovingPostponeTheFall() throws {
        var indicator = makeIndicator(throttle: .zero)
        let id = try indicator.begin(owner: ":1.1", label: "x").id
        var bytes: UInt64 = 0
        for _ in 0..<20 {
            bytes += 500
            _ = try indicator.update(id, by: ":1.1", completed: bytes, total: 0)
            clock.advance(by: .seconds(1))
            #expect(indicator.advance().progressOf.isEmpty)
        }
        #expect(indicator.ledger.activity(id)?.rate == 500)
        // The stalled activity wakes the indicator at most once more before its rate is 0.
        var wakeUps = 0
        while let deadline = indicator.nextDeadline {
            clock.advance(by: clock.now.duration(to: deadline))
            _ = indicator.advance()
            wakeUps += 1
        }
        #expect(wakeUps <= 2)
        #expect(indicator.ledger.rate == 0)
    }

    @Test func fractionModeHasNoRateAndEndingLeavesNoTimer() throws {
        var indicator = makeIndicator(throttle: .zero)
        let id = try indicator.begin(owner: ":1.1", label: "x").id
        _ = try indicator.update(id, by: ":1.1", completed: 0, total: 0)
        clock.advance(by: .seconds(1))
        _ = try indicator.update(id, by: ":1.1", completed: 100, total: 0)
        #expect(indicator.ledger.rate == 100)
        _ = try indicator.updateFraction(id, by: ":1.1", fraction: 0.1)
        #expect(indicator.ledger.rate == 0)
        #expect(indicator.ledger.activity(id)?.rate == 0)
        _ = try indicator.update(id, by: ":1.1", completed: 200, total: 0)
        clock.advance(by: .seconds(1))
        _ = try indicator.update(id, by: ":1.1", completed: 300, total: 0)
        #expect(indicator.ledger.rate == 100)
        _ = try indicator.end(id, by: ":1.1")
        #expect(indicator.ledger.rate == 0)
        #expect(indicator.nextDeadline == nil, "an idle indicator never wakes")
    }

    @Test func theMainRateIsTheSumAndExactlyZeroWithoutRates() throws {
        var ledger = Ledger()
        let ids = try ledger.begin(3, owner: ":1.1")
        for (index, id) in ids.enumerated() {
            try ledger.update(id, by: ":1.1", completed: 0, total: 0, at: Instant(nanoseconds: 0))
            try ledger.update(id, by: ":1.1", completed: UInt64(index + 1) * 333, total: 0, at: Instant(nanoseconds: 1_000_000_000))
        }
        #expect(ledger.rate == 333 + 666 + 999)
        ledger.release(owner: ":1.1")
        #expect(ledger.rate == 0)
    }
}
