import DBus
import NetActivity

/// Which of the merged activities are jobs in plasmashell, and what to tell it, decided from
/// the activities and the time alone (no bus), so the rules are tested in microseconds.
///
/// An activity becomes a job once it has lasted `minimumAge`: Plasma pops up every job, and a
/// flicker of short ones would be noise. A job is updated at most once per `updateInterval`,
/// with only what changed since the last update; it is terminated when its activity ends. Which
/// activities may be mirrored at all is the caller's choice (`JobMirror` leaves out observed
/// traffic and the bridge's own jobs).
struct MirrorPlan {
    static let minimumAge: Duration = .seconds(3)
    static let updateInterval: Duration = .seconds(1)

    /// An activity, told apart from the other service's by its bus.
    struct Key: Hashable, Sendable {
        let bus: ActivityInfo.Bus
        let id: UInt32
    }

    /// What a job shows, as version 3's `update` names it.
    struct Fields: Equatable, Sendable {
        /// The activity's label. Plasma shows the title in bold and the info message below it.
        var title: String
        /// What the transfer does, from its kind ("Downloading"); none for `other`, rather than
        /// the label a second time.
        var infoMessage: String?
        var percent: UInt32?
        var processedBytes: UInt64?
        var totalBytes: UInt64?
        var speed: UInt64

        init(_ activity: ActivityInfo) {
            title = activity.label
            infoMessage = Self.doing[activity.kind]
            // The service is a peer like any other: a fraction that is no number is no percent.
            percent = activity.fraction.flatMap { $0.isFinite ? UInt32((min(max($0, 0), 1) * 100).rounded(.down)) : nil }
            if activity.total > 0 {
                processedBytes = activity.completed
                totalBytes = activity.total
            } else if activity.reportedFraction == nil, activity.completed > 0 {
                processedBytes = activity.completed
            }
            speed = activity.rate.isFinite && activity.rate > 0 ? UInt64(min(activity.rate, 1e18)) : 0
        }

        /// The info message for each kind but `other`.
        static let doing = ["download": "Downloading", "upload": "Uploading", "sync": "Syncing", "update": "Updating"]

        /// The `update` dictionary's entries that differ from `old` (all of them without one).
        func entries(since old: Fields?) -> [(String, Value)] {
            var entries: [(String, Value)] = []
            if title != old?.title { entries.append(("title", .string(title))) }
            if let infoMessage, infoMessage != old?.infoMessage { entries.append(("infoMessage", .string(infoMessage))) }
            if let percent, percent != old?.percent { entries.append(("percent", .uint32(percent))) }
            if let processedBytes, processedBytes != old?.processedBytes {
                entries.append(("processedBytes", .uint64(processedBytes)))
            }
            if let totalBytes, totalBytes != old?.totalBytes { entries.append(("totalBytes", .uint64(totalBytes))) }
            if speed != old?.speed ?? 0 { entries.append(("speed", .uint64(speed))) }
            return entries
        }
    }

    enum Action {
        /// Ask for a view for this activity; its first update follows the reply.
        case request(Key)
        /// Send these entries, what changed since the last update, to the job's view.
        case update(Key, [(String, Value)])
        case terminate(Key)
    }

    private struct Job {
        /// The fields last sent; nil until the view exists and its first update went.
        var sent: Fields?
        var lastUpdate: ContinuousClock.Instant?
        var viewReady = false
    }

    private var jobs: [Key: Job] = [:]
    private var latest: [Key: Fields] = [:]

    /// Whether any job is held: terminated at exit.
    var heldJobs: [Key] { Array(jobs.keys) }

    /// The actions `activities` (those that may be mirrored) call for at `now` (monotonic) and
    /// `wallMicroseconds` (the clock `ActivityInfo.started` is on), and when to look again
    /// with the same activities (nil: only on a change).
    mutating func step(
        _ activities: [(Key, ActivityInfo)], now: ContinuousClock.Instant, wallMicroseconds: UInt64
    ) -> (actions: [Action], next: ContinuousClock.Instant?) {
        var actions: [Action] = []
        var next: ContinuousClock.Instant?
        func wake(_ at: ContinuousClock.Instant) { next = min(next ?? at, at) }
        let minimumAge = UInt64(Self.minimumAge.components.seconds) * 1_000_000
        var live = Set<Key>()
        for (key, activity) in activities {
            live.insert(key)
            let fields = Fields(activity)
            latest[key] = fields
            guard var job = jobs[key] else {
                let age = wallMicroseconds >= activity.started ? wallMicroseconds - activity.started : 0
                if age >= minimumAge {
                    jobs[key] = Job()
                    actions.append(.request(key))
                } else {
                    wake(now + .microseconds(Int64(minimumAge - age)))
                }
                continue
            }
            guard job.viewReady, fields != job.sent else { continue }
            if let last = job.lastUpdate, now - last < Self.updateInterval {
                wake(last + Self.updateInterval)
                continue
            }
            let changed = fields.entries(since: job.sent)
            job.sent = fields
            job.lastUpdate = now
            jobs[key] = job
            actions.append(.update(key, changed))
        }
        for key in jobs.keys where !live.contains(key) {
            jobs[key] = nil
            actions.append(.terminate(key))
        }
        for key in latest.keys where !live.contains(key) { latest[key] = nil }
        return (actions, next)
    }

    /// The view for `key` exists: its first update, with every field, goes now.
    mutating func viewReady(_ key: Key, now: ContinuousClock.Instant) -> [(String, Value)] {
        guard var job = jobs[key], let fields = latest[key] else { return [] }
        job.viewReady = true
        job.sent = fields
        job.lastUpdate = now
        jobs[key] = job
        return fields.entries(since: nil)
    }

    /// Forgets every job, as when their server is gone; what is still live is requested again
    /// at the next step.
    mutating func forgetAll() {
        jobs.removeAll()
    }
}
