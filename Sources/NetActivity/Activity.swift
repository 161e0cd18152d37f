import DBus
import Synchronization

/// A tracked activity: one connection, download or sync that the indicator counts while it
/// lives.
///
/// `report(completed:total:)` and `end()` never block and are safe from any thread. Reports are
/// coalesced: however often the app reports, the service gets at most one `UpdateActivity` in
/// flight (and at most about 40 a second) for this activity, always with the latest value, and
/// none after `end()`. Ending twice is harmless, and an activity released without `end()` ends
/// itself. If the app crashes, the service ends it when the app's bus connection goes away.
public final class Activity: Sendable {
    /// The label the indicator shows, e.g. "Sync feeds" or "example.com/file.iso".
    public let label: String
    let localID: Int
    private let session: SessionHandle?
    private let ended = Atomic<Bool>(false)
    /// The latest report, and whether a hand-over to the loop thread is already on its way (so
    /// a tight loop of reports posts one piece of work, not one each).
    private let latest = Locked<(progress: Progress, posted: Bool)>((.bytes(0, 0), false))

    /// What was reported last: bytes, or a fraction alone.
    enum Progress: Equatable, Sendable {
        case bytes(UInt64, UInt64)
        case fraction(Double)
    }

    init(label: String, localID: Int, session: SessionHandle?) {
        self.label = label
        self.localID = localID
        self.session = session
    }

    deinit {
        end()
    }

    /// Reports byte progress: `completed` of `total` bytes, `total` 0 when unknown.
    /// A `completed` beyond a known `total` is clamped to it.
    public func report(completed: UInt64, total: UInt64) {
        report(.bytes(total > 0 ? min(completed, total) : completed, total))
    }

    /// Reports progress known only as a fraction from 0 to 1 (a step count, a percentage from
    /// another program): the service shows it until bytes are reported again. A fraction
    /// outside 0...1 is clamped; NaN is ignored. A service older than interface version 3 gets
    /// it as 10,000ths of a byte total.
    public func report(fraction: Double) {
        guard !fraction.isNaN else { return }
        report(.fraction(min(1, max(0, fraction))))
    }

    private func report(_ progress: Progress) {
        guard !ended.load(ordering: .relaxed) else { return }
        let post = latest.withLock { state in
            state.progress = progress
            defer { state.posted = true }
            return !state.posted
        }
        guard post, let session else { return }
        session.perform { [self] in
            let progress = latest.withLock { state in
                state.posted = false
                return state.progress
            }
            $0.update(localID, progress)
        }
    }

    /// The last byte progress reported: `(completed, total)`; (0, 0) after a fraction.
    public var progress: (completed: UInt64, total: UInt64) {
        latest.withLock {
            guard case .bytes(let completed, let total) = $0.progress else { return (0, 0) }
            return (completed, total)
        }
    }

    /// The last fraction reported with `report(fraction:)`, or nil after a byte report.
    public var reportedFraction: Double? {
        latest.withLock {
            guard case .fraction(let fraction) = $0.progress else { return nil }
            return fraction
        }
    }

    /// Ends the activity. Later calls, and `report` after it, do nothing.
    public func end() {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        session?.perform { [localID] in $0.end(localID) }
    }

    /// Whether `end()` has been called.
    public var isEnded: Bool { ended.load(ordering: .relaxed) }
}
