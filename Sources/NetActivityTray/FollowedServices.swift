import NetActivity
import Synchronization

/// The services a watcher (`netactivity watch`, `status`, `tray`) shows as one indicator: the
/// session side, the system side, or both, merged by `IndicatorSnapshot.merging(session:system:)`.
///
/// Each side is followed by a `NetActivityClient` of its own, so either service (or either bus)
/// may be absent, appear, restart or vanish at any time: a side that is gone adds nothing.
public struct FollowedServices: Equatable, Sendable {
    /// The bus of the session side (the user's own `netactivityd`), or nil to leave it out.
    public var session: Bus?
    /// The bus of the system side (`netactivityd --system`), or nil to leave it out.
    public var system: Bus?

    /// Follows `session` and `system`; at least one should be non-nil.
    public init(session: Bus?, system: Bus?) {
        self.session = session
        self.system = system
    }

    /// The default of the command line: the session bus and the system bus.
    public static let sessionAndSystem = FollowedServices(session: .session, system: .system)

    /// How long the first merged state waits for the slower side's first state, so that a
    /// watcher's first line is the union rather than one side alone.
    static let firstStateGrace: Duration = .milliseconds(500)

    /// The merged state: the current state first, then every change. Reads as unavailable only
    /// while neither side's service is reachable. Ends when the task stops iterating.
    ///
    /// - Parameter problems: gets one line per problem, as `NetActivityClient` reports them;
    ///   the system side's lines begin with "system side: ". An absent system bus is one line
    ///   per outage.
    public func states(
        problems: @escaping @Sendable (String) -> Void = NetActivityClient.logToStandardError
    ) -> AsyncStream<IndicatorSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: IndicatorSnapshot.self, bufferingPolicy: .bufferingNewest(64))
        var sides: [(bus: Bus, side: ActivityInfo.Bus)] = []
        if let session { sides.append((session, .session)) }
        if let system { sides.append((system, .system)) }
        let latest = LatestStates(expected: Set(sides.map(\.side)), continuation: continuation)
        let merging = sides.count > 1
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                for (bus, side) in sides {
                    let report = merging && side == .system ? Self.marked(problems) : problems
                    group.addTask { await Self.follow(bus, as: side, into: latest, problems: report) }
                }
                if merging {
                    group.addTask {
                        try? await Task.sleep(for: Self.firstStateGrace)
                        latest.endGrace()
                    }
                }
                await group.waitForAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Records every state of the service on `bus` until the task is cancelled.
    private static func follow(
        _ bus: Bus, as side: ActivityInfo.Bus, into latest: LatestStates,
        problems: @escaping @Sendable (String) -> Void
    ) async {
        // The client lives as long as this loop: releasing it ends its stream.
        let client = NetActivityClient(bus: bus, problems: problems)
        for await state in client.states() {
            latest.record(state, from: side)
        }
    }

    private static func marked(_ problems: @escaping @Sendable (String) -> Void) -> @Sendable (String) -> Void {
        { problems("system side: " + $0) }
    }
}

/// Each side's last state and the last merged state sent. One lock around merging and
/// sending, so that merged states go out in the order the sides' states were recorded.
private final class LatestStates: Sendable {
    private struct Held {
        var states: [ActivityInfo.Bus: IndicatorSnapshot] = [:]
        var graceOver = false
        var sent: IndicatorSnapshot?
    }

    private let expected: Set<ActivityInfo.Bus>
    private let continuation: AsyncStream<IndicatorSnapshot>.Continuation
    private let held = Mutex(Held())

    init(expected: Set<ActivityInfo.Bus>, continuation: AsyncStream<IndicatorSnapshot>.Continuation) {
        self.expected = expected
        self.continuation = continuation
    }

    func record(_ state: IndicatorSnapshot, from side: ActivityInfo.Bus) {
        held.withLock { held in
            held.states[side] = state
            send(&held)
        }
    }

    /// The first state goes out now even if a side has not spoken yet.
    func endGrace() {
        held.withLock { held in
            held.graceOver = true
            send(&held)
        }
    }

    private func send(_ held: inout Held) {
        guard !held.states.isEmpty, held.graceOver || Set(held.states.keys) == expected else { return }
        let merged = IndicatorSnapshot.merging(session: held.states[.session], system: held.states[.system])
        guard merged != held.sent else { return }
        held.sent = merged
        continuation.yield(merged)
    }
}
