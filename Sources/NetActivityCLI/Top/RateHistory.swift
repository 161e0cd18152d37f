/// The total rate over the last minute, one sample a second, for the sparkline of
/// `netactivity top`.
///
/// Sampled when a state arrives and on `top`'s one-second tick, which runs only while
/// something is active: a second without a sample is a second nothing was active, and reads as
/// 0. Fixed memory: one slot per second of the window.
struct RateHistory: Equatable {
    /// Seconds the window spans.
    static let seconds = 60

    /// The sparkline's levels, lowest first; a second without a rate is a space.
    static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    private struct Slot: Equatable {
        var second: Int64
        var rate: Double
    }

    /// Slot `second mod seconds` holds that second's sample, if it is that second's.
    private var slots = [Slot](repeating: Slot(second: .min, rate: 0), count: RateHistory.seconds)

    /// Records `rate` (bytes per second) for `second` (on a monotonic clock); of several
    /// samples in one second, the highest counts.
    mutating func record(_ rate: Double, at second: Int64) {
        let rate = rate.isFinite ? max(0, rate) : 0
        let index = Self.slot(of: second)
        if slots[index].second == second {
            slots[index].rate = max(slots[index].rate, rate)
        } else {
            slots[index] = Slot(second: second, rate: rate)
        }
    }

    /// The rates of the `count` seconds (at most `seconds`) that end with `second`, oldest first;
    /// 0 for a second without a sample.
    func rates(endingAt second: Int64, count: Int) -> [Double] {
        let count = min(max(0, count), Self.seconds)
        return (0..<count).map { offset in
            let wanted = second - Int64(count - 1 - offset)
            let slot = slots[Self.slot(of: wanted)]
            return slot.second == wanted ? slot.rate : 0
        }
    }

    /// The highest rate of the window that ends with `second`.
    func peak(endingAt second: Int64) -> Double {
        rates(endingAt: second, count: Self.seconds).max() ?? 0
    }

    /// The last `width` seconds (at most `seconds`) as bars scaled to the window's peak: a
    /// space for a second that moved nothing, at least the lowest bar for one that moved any.
    func sparkline(endingAt second: Int64, width: Int) -> String {
        let peak = peak(endingAt: second)
        return String(
            rates(endingAt: second, count: width).map { rate -> Character in
                guard rate > 0, peak > 0 else { return " " }
                let level = Int((rate / peak * Double(Self.levels.count)).rounded(.up))
                return Self.levels[min(max(level, 1), Self.levels.count) - 1]
            })
    }

    private static func slot(of second: Int64) -> Int {
        let remainder = Int(second % Int64(seconds))
        return remainder < 0 ? remainder + seconds : remainder
    }
}
