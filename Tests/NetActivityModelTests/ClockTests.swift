import Platform
import Testing
@testable import NetActivityModel

struct ClockTests {
    @Test func manualClockStartsAtItsDefaults() {
        let clock = ManualClock()
        #expect(clock.now == Instant(nanoseconds: 1_000_000_000))
        #expect(clock.wallMicroseconds == 1_700_000_000_000_000)
    }

    @Test func manualClockAdvancesBothReadings() {
        let clock = ManualClock(now: Instant(nanoseconds: 0), wallMicroseconds: 1_000)
        clock.advance(by: .milliseconds(3))
        #expect(clock.now == Instant(nanoseconds: 3_000_000))
        #expect(clock.wallMicroseconds == 4_000)
    }

    @Test func manualClockAddsUpSubMicrosecondSteps() {
        let clock = ManualClock(now: Instant(nanoseconds: 0), wallMicroseconds: 0)
        for _ in 0..<4 { clock.advance(by: .nanoseconds(250)) }
        #expect(clock.wallMicroseconds == 1)
    }

    @Test func manualClockIgnoresNegativeSteps() {
        let clock = ManualClock()
        let before = (clock.now, clock.wallMicroseconds)
        clock.advance(by: .seconds(-5))
        #expect(clock.now == before.0)
        #expect(clock.wallMicroseconds == before.1)
    }

    @Test func manualClockSaturatesTheWallClock() {
        let clock = ManualClock(now: Instant(nanoseconds: 0), wallMicroseconds: .max - 1)
        clock.advance(by: .seconds(1))
        #expect(clock.wallMicroseconds == .max)
    }

    @Test func systemClockIsMonotonicAndAfter2023() {
        let clock = SystemTime()
        let first = clock.now
        let second = clock.now
        #expect(first <= second)
        #expect(first.nanoseconds > 0)
        #expect(clock.wallMicroseconds > 1_700_000_000_000_000)
    }
}
