import DBus

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

    /// Calls `handler` on `loop` with the merged state: the current state first, then every
    /// change. Reads as unavailable only while neither side's service is reachable. Follows
    /// until the returned `MergedStates` is cancelled or released.
    ///
    /// Call on `loop`'s thread, or before it runs. The sides' clients hand their states to
    /// `loop` with `post`, so nothing here needs Swift concurrency: an idle loop sleeps.
    ///
    /// - Parameters:
    ///   - problems: gets one line per problem, as `NetActivityClient` reports them, on a
    ///     client's thread; the system side's lines begin with "system side: ". An absent system
    ///     bus is one line per outage, which the default handler leaves out.
    ///   - readInterval: when given, the sides' clients do their bus work on `loop` too, rather
    ///     than on threads of their own, reading their connections at most this often: for a
    ///     program that runs `loop` itself and needs the state no more often (the bridge's
    ///     plasma-jobs mirror), where a state then reaches the handler with no thread to wake.
    public func observe(
        on loop: EventLoop,
        problems: @escaping @Sendable (String) -> Void = NetActivityClient.logToStandardError,
        sharingLoopReadingAtMostEvery readInterval: Duration? = nil,
        _ handler: @escaping (IndicatorSnapshot) -> Void
    ) -> MergedStates {
        var sides: [(bus: Bus, side: ActivityInfo.Bus)] = []
        if let session { sides.append((session, .session)) }
        if let system { sides.append((system, .system)) }
        let merging = sides.count > 1
        let merged = MergedStates(loop: loop, expected: Set(sides.map(\.side)), handler: handler)
        for (bus, side) in sides {
            let report = merging && side == .system ? Self.marked(problems) : problems
            // The observation keeps the client; the client's thread only hands the state over.
            // Only the latest waits for the loop: with thousands of activities a state is large
            // and a slow handler (a JSON line per state) would otherwise queue them without bound.
            let latest = Locked<IndicatorSnapshot?>(nil)
            let client =
                readInterval.map { NetActivityClient(bus: bus, sharing: loop, readingAtMostEvery: $0, problems: report) }
                ?? NetActivityClient(bus: bus, problems: report)
            let observation = client.observe { [weak merged] state in
                let waiting = latest.withLock { slot in
                    defer { slot = state }
                    return slot != nil
                }
                guard !waiting else { return }
                loop.post { [weak merged] in
                    guard let state = latest.withLock({ slot in defer { slot = nil }; return slot }) else { return }
                    merged?.record(state, from: side)
                }
            }
            merged.hold(observation)
        }
        if merging { merged.startGrace(Self.firstStateGrace) } else { merged.endGrace() }
        return merged
    }

    private static func marked(_ problems: @escaping @Sendable (String) -> Void) -> @Sendable (String) -> Void {
        { problems("system side: " + $0) }
    }
}

/// The merged state of the followed services, kept on one `EventLoop`: each side's last state
/// and the last merged state handed out. Returned by `FollowedServices.observe(on:problems:_:)`.
///
/// Touched only on the loop's thread (`cancel()` included; `loop.assertConfined` in debug
/// builds); merged states go out in the order the loop received the sides' states.
public final class MergedStates: @unchecked Sendable {
    private let loop: EventLoop
    private let expected: Set<ActivityInfo.Bus>
    private let handler: (IndicatorSnapshot) -> Void
    private var states: [ActivityInfo.Bus: IndicatorSnapshot] = [:]
    private var graceOver = false
    private var graceTimer: EventLoop.TimerID?
    private var sent: IndicatorSnapshot?
    private var observations: [Observation] = []
    private var cancelled = false

    init(loop: EventLoop, expected: Set<ActivityInfo.Bus>, handler: @escaping (IndicatorSnapshot) -> Void) {
        self.loop = loop
        self.expected = expected
        self.handler = handler
    }

    deinit {
        for observation in observations { observation.cancel() }
        if let graceTimer { loop.cancel(graceTimer) }
    }

    /// Stops following: the sides' clients let go and the handler is not called again.
    public func cancel() {
        loop.assertConfined("merged states")
        cancelled = true
        for observation in observations { observation.cancel() }
        observations.removeAll()
        if let graceTimer { loop.cancel(graceTimer) }
        graceTimer = nil
    }

    func hold(_ observation: Observation) {
        observations.append(observation)
    }

    func startGrace(_ grace: Duration) {
        graceTimer = loop.schedule(after: grace) { [weak self] in
            self?.graceTimer = nil
            self?.endGrace()
        }
    }

    func record(_ state: IndicatorSnapshot, from side: ActivityInfo.Bus) {
        loop.assertConfined("merged states")
        states[side] = state
        send()
    }

    /// The first state goes out now even if a side has not spoken yet.
    func endGrace() {
        loop.assertConfined("merged states")
        graceOver = true
        send()
    }

    private func send() {
        guard !cancelled, !states.isEmpty, graceOver || Set(states.keys) == expected else { return }
        let merged = IndicatorSnapshot.merging(session: states[.session], system: states[.system])
        guard merged != sent else { return }
        sent = merged
        handler(merged)
    }
}
