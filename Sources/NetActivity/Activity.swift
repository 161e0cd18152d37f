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
    // A pthread lock, not `Mutex`, which ThreadSanitizer cannot see through (see `Locked`).
    private let latest = Locked<(completed: UInt64, total: UInt64, posted: Bool)>((0, 0, false))

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
        guard !ended.load(ordering: .relaxed) else { return }
        let completed = total > 0 ? min(completed, total) : completed
        let post = latest.withLock { state in
            state.completed = completed
            state.total = total
            defer { state.posted = true }
            return !state.posted
        }
        guard post, let session else { return }
        session.perform { [self] in
            let (completed, total) = latest.withLock { state in
                state.posted = false
                return (state.completed, state.total)
            }
            $0.update(localID, completed: completed, total: total)
        }
    }

    /// The last progress reported: `(completed, total)`.
    public var progress: (completed: UInt64, total: UInt64) {
        latest.withLock { ($0.completed, $0.total) }
    }

    /// Ends the activity. Later calls, and `report` after it, do nothing.
    public func end() {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        session?.perform { [localID] in $0.end(localID) }
    }

    /// Whether `end()` has been called.
    public var isEnded: Bool { ended.load(ordering: .relaxed) }
}
