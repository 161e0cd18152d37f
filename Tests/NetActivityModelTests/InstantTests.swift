import Testing
@testable import NetActivityModel

struct InstantTests {
    @Test(arguments: [
        (UInt64(0), Duration.zero, UInt64(0)),
        (1_000, .nanoseconds(1), 1_001),
        (1_000, .milliseconds(50), 50_001_000),
        (5, .seconds(2), 2_000_000_005),
        (1_000, .nanoseconds(-1), 1_000),
        (1_000, .seconds(-10), 1_000),
        (UInt64.max - 1, .nanoseconds(1), UInt64.max),
        (UInt64.max - 1, .seconds(1), UInt64.max),
        (1, .seconds(Int64.max), UInt64.max),
    ])
    func addingDurationSaturates(start: UInt64, duration: Duration, expected: UInt64) {
        #expect(Instant(nanoseconds: start) + duration == Instant(nanoseconds: expected))
    }

    @Test func subNanosecondPartsAreDropped() {
        #expect(Instant(nanoseconds: 10) + .nanoseconds(1) / 2 == Instant(nanoseconds: 10))
    }

    @Test(arguments: [
        (UInt64(0), UInt64(0), Duration.zero),
        (1_000, 3_000, .nanoseconds(2_000)),
        (3_000, 1_000, .nanoseconds(-2_000)),
        (1_000_000_000, 3_500_000_000, .milliseconds(2_500)),
        (0, UInt64.max, .seconds(18_446_744_073) + .nanoseconds(709_551_615)),
        (UInt64.max, 0, .zero - .seconds(18_446_744_073) - .nanoseconds(709_551_615)),
    ])
    func durationBetweenInstants(from: UInt64, to: UInt64, expected: Duration) {
        #expect(Instant(nanoseconds: from).duration(to: Instant(nanoseconds: to)) == expected)
    }

    @Test func durationRoundTripsThroughAddition() {
        let start = Instant(nanoseconds: 123_456_789)
        let end = Instant(nanoseconds: 987_654_321_000)
        #expect(start + start.duration(to: end) == end)
    }

    @Test func instantsOrderByNanoseconds() {
        #expect(Instant(nanoseconds: 1) < Instant(nanoseconds: 2))
        #expect(!(Instant(nanoseconds: 2) < Instant(nanoseconds: 2)))
        #expect(Instant(nanoseconds: 7) == Instant(nanoseconds: 7))
        #expect(Set([Instant(nanoseconds: 7), Instant(nanoseconds: 7)]).count == 1)
    }
}
