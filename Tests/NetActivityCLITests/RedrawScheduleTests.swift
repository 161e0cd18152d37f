@testable import NetActivityCLI
import Testing

/// When `top` draws: at most a frame a second, a tick a second while active, nothing while idle.
@Suite struct RedrawScheduleTests {
    static let second: UInt64 = 1_000_000_000

    @Test func theFirstChangeDrawsAtOnce() {
        var schedule = RedrawSchedule(interval: Self.second)
        #expect(schedule.changed(at: 5 * Self.second) == .drawNow)
        #expect(schedule.drew(at: 5 * Self.second, active: false) == nil, "idle: nothing due")
        #expect(schedule.due == nil)
    }

    @Test func aBurstOfChangesIsOneFrameASecond() {
        var schedule = RedrawSchedule(interval: Self.second)
        var frames: [UInt64] = []
        var timer: UInt64?
        // 100 changes a second for three seconds, the state going idle each time (no tick).
        for step in 0..<300 {
            let now = 10 * Self.second + UInt64(step) * Self.second / 100
            if let due = timer, due <= now {
                timer = nil
                frames.append(due)
                _ = schedule.drew(at: due, active: false)
            }
            switch schedule.changed(at: now) {
            case .drawNow:
                frames.append(now)
                _ = schedule.drew(at: now, active: false)
            case .drawAt(let due):
                #expect(timer == nil, "one timer at a time")
                timer = due
            case .alreadyDue:
                #expect(timer != nil)
            }
        }
        #expect(frames == [10, 11, 12].map { $0 * Self.second }, "\(frames)")
    }

    @Test func whileActiveATickASecondThenNothingOnceIdle() {
        var schedule = RedrawSchedule(interval: Self.second)
        #expect(schedule.changed(at: 0) == .drawNow)
        #expect(schedule.drew(at: 0, active: true) == Self.second)
        // A change before the tick is shown by it.
        #expect(schedule.changed(at: Self.second / 2) == .alreadyDue)
        #expect(schedule.drew(at: Self.second, active: true) == 2 * Self.second)
        // The tick that finds nothing active schedules nothing more.
        #expect(schedule.drew(at: 2 * Self.second, active: false) == nil)
        #expect(schedule.due == nil)
        // Long after, a change draws at once.
        #expect(schedule.changed(at: 60 * Self.second) == .drawNow)
    }

    @Test func aResizeDrawsOutOfTurn() {
        var schedule = RedrawSchedule(interval: Self.second)
        _ = schedule.changed(at: 0)
        _ = schedule.drew(at: 0, active: false)
        #expect(schedule.changed(at: Self.second / 4) == .drawAt(Self.second))
        // The resize cancels the due frame and draws at once; the change it carried shows.
        schedule.cancel()
        #expect(schedule.drew(at: Self.second / 3, active: false) == nil)
        #expect(schedule.changed(at: Self.second / 2) == .drawAt(Self.second / 3 + Self.second))
    }
}
