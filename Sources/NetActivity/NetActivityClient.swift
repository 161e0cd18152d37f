// What an app reads of the service by descriptor (`ActivityInfo[descriptor]`), with `import NetActivity` alone.
@_exported import enum NetActivityContract.ActivityObjectInterface
@_exported import enum NetActivityContract.NetActivityInterface
import DBus
import NetActivityContract
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which bus a client reports to.
public enum Bus: Sendable, Equatable {
    /// The user's session bus, where the desktop's indicator lives.
    case session
    /// The system bus.
    case system
    /// A bus at an explicit address such as `unix:path=/run/user/1000/bus`.
    case address(String)

    /// The same bus in the terms of the `DBus` layer.
    public var busAddress: BusAddress {
        switch self {
        case .session: .session
        case .system: .system
        case .address(let address): .address(address)
        }
    }
}

/// Reports this app's network activity to the desktop's indicator, and watches it.
///
/// Every call returns at once and never throws into the app: the client owns its bus
/// connection on a thread of its own, keeps the app's view (outstanding pushes, live
/// activities with their last progress) and brings the service in line with it, including after
/// the service restarts or starts late. Problems (no service, a refused call) go to the
/// `problems` handler, the unavailability of the service once per outage. Safe from any thread
/// or task.
///
///     let indicator = NetActivityClient.shared
///     let activity = indicator.begin("Sync feeds")
///     activity.report(completed: 512, total: 2048)
///     activity.end()
public final class NetActivityClient: Sendable {
    private let handle: SessionHandle?
    private let nextLocalID = Atomic<Int>(0)
    private let problems: @Sendable (String) -> Void
    /// The activities behind `push()`, the most recent last.
    private let pushes = Locked<[Activity]>([])

    /// A client for the session bus, created on first use.
    public static let shared = NetActivityClient()

    /// Writes a problem to standard error as one line, `netactivity: …`, except that there is no
    /// system bus at all (no socket, as in most containers): that only means nothing runs
    /// there, and a handler of the app's own still hears it.
    public static let logToStandardError: @Sendable (String) -> Void = { message in
        guard !meansNoSystemBus(message) else { return }
        var line = "netactivity: \(message)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Whether a problem says only that there is no system bus at all (its socket does not
    /// exist), rather than that a system bus or its service failed.
    public static func meansNoSystemBus(_ message: String) -> Bool {
        message.contains(BusAddress.noSystemBusMessage)
    }

    /// A client for `bus`. Nothing touches the bus until the first call.
    ///
    /// - Parameter problems: called on the client's own thread with a one-line description
    ///   of each problem; the default writes it to standard error.
    public init(bus: Bus = .session, problems: @escaping @Sendable (String) -> Void = NetActivityClient.logToStandardError) {
        self.problems = problems
        do {
            handle = SessionHandle(bus: bus.busAddress, thread: try LoopThread(), problems: problems)
        } catch {
            problems("cannot start the reporting thread: \(error.message)")
            handle = nil
        }
    }

    /// A client for `bus` that does its bus work on `loop`, a loop the program runs itself, rather
    /// than on a thread of its own: for a program built around one `EventLoop` (as `netactivity
    /// bridge` is), where a report made on the loop's thread then reaches the bus in the loop's
    /// next turn with no thread to wake. Calls stay safe from any thread. The client's work waits
    /// while the loop is not running; the program's exit still ends its activities, with its
    /// connection.
    public init(
        bus: Bus = .session, sharing loop: EventLoop,
        problems: @escaping @Sendable (String) -> Void = NetActivityClient.logToStandardError
    ) {
        self.problems = problems
        handle = SessionHandle(bus: bus.busAddress, thread: LoopThread(sharing: loop), problems: problems)
    }

    /// The unique name of the bus connection this client's activities are owned by (their
    /// `Owner`), nil while it has none: for a program that reports through several clients
    /// and must tell their activities apart in what it observes (the bridge's `plasma-jobs`
    /// source leaves out what its `traffic` source observed). Safe from any thread.
    package var connectionName: String? {
        handle?.connectionName.withLock { $0 }
    }

    /// A client for `bus` sharing `loop`, as `init(bus:sharing:problems:)`, whose connection is
    /// read at most every `readInterval`: for a program that only follows the service's state
    /// and needs it no more often than that (the bridge's plasma-jobs mirror updates Plasma once
    /// a second), so that a service announcing progress 20 times a second wakes it less.
    package init(
        bus: Bus, sharing loop: EventLoop, readingAtMostEvery readInterval: Duration,
        problems: @escaping @Sendable (String) -> Void
    ) {
        self.problems = problems
        handle = SessionHandle(bus: bus.busAddress, thread: LoopThread(sharing: loop), readInterval: readInterval, problems: problems)
    }

    // MARK: - Push and pop

    /// Says a connection of the app's own started: the indicator counts it until the matching
    /// `pop()`. Balance with `pop()`.
    ///
    /// Backed by a tracked activity labelled "push" that this client's bus connection owns, so
    /// an app that dies (crash, `kill -9`) while holding pushes leaves nothing behind: the
    /// service ends them the moment the app's connection goes. (The command line's
    /// `netactivity push`/`pop` work the service's shared counter instead, which outlives the
    /// process that pushed, as a script needs.)
    public func push() {
        let activity = begin(Self.pushLabel)
        pushes.withLock { $0.append(activity) }
    }

    /// Ends the most recent `push()` still held. A `pop()` without one is reported to
    /// `problems` and changes nothing.
    public func pop() {
        guard let activity = pushes.withLock({ $0.popLast() }) else {
            problems("pop() without a matching push(); ignored")
            return
        }
        activity.end()
    }

    /// The label of the activities behind `push()`.
    public static let pushLabel = "push"

    // MARK: - Tracked activities

    /// Begins a tracked activity labelled `label`. The indicator counts it until `end()` (or
    /// until the returned object is released, or the app exits).
    /// A label longer than the service accepts (`maximumLabelBytes`) is cut to fit, on a
    /// character boundary.
    ///
    /// `hints` say what the activity is for (its application, icon and kind); a service older
    /// than interface version 3 shows the activity without them, said once to `problems`.
    public func begin(_ label: String, hints: ActivityHints = ActivityHints()) -> Activity {
        let label = Self.fitted(label)
        let localID = nextLocalID.add(1, ordering: .relaxed).newValue
        handle?.perform { $0.begin(localID, label: label, hints: hints) }
        guard let handle else { return Activity(label: label, localID: localID, session: nil) }
        return Activity(label: label, localID: localID, session: handle)
    }

    /// The longest label the service accepts, in UTF-8 bytes.
    public static let maximumLabelBytes = NetActivityBus.Limits.labelBytes

    /// `label`, cut on a character boundary to at most `maximumLabelBytes`.
    public static func fitted(_ label: String) -> String {
        fitted(label, toBytes: maximumLabelBytes)
    }

    /// `text`, cut on a character boundary to at most `bytes` UTF-8 bytes.
    static func fitted(_ text: String, toBytes bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var fitted = ""
        for character in text {
            guard fitted.utf8.count + character.utf8.count <= bytes else { break }
            fitted.append(character)
        }
        return fitted
    }

    /// Runs `body` while holding an activity labelled `label`; the activity ends when `body`
    /// returns or throws, and as soon as the task is cancelled.
    ///
    /// Callable from any actor: `body` runs on the caller's actor (`isolation`), so a
    /// `@MainActor` view model can call it and touch its own state inside `body`.
    ///
    ///     @MainActor final class Feeds {
    ///         var items: [String] = []
    ///         func refresh() async throws {
    ///             try await NetActivityClient.shared.tracking("Sync feeds") { activity in
    ///                 items = try await fetchItems()
    ///             }
    ///         }
    ///     }
    public func tracking<Result>(
        _ label: String, hints: ActivityHints = ActivityHints(), isolation: isolated (any Actor)? = #isolation,
        _ body: (Activity) async throws -> Result
    ) async rethrows -> Result {
        let activity = begin(label, hints: hints)
        defer { activity.end() }
        return try await withTaskCancellationHandler {
            try await body(activity)
        } onCancel: {
            activity.end()
        }
    }

    // MARK: - Watching

    /// The indicator's state: the current state first, then every change. While the service
    /// is gone it reads as idle with `serviceAvailable` false. Ends when the task stops
    /// iterating, or when the client is released.
    public func states() -> AsyncStream<IndicatorSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: IndicatorSnapshot.self, bufferingPolicy: .bufferingNewest(64))
        // The stream does not keep the client: releasing it finishes the stream.
        let observation = follow(keepingClient: false, continuation.finish) { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Calls `handler` with the indicator's state: the current state first, then every change.
    /// While the service is gone it reads as idle with `serviceAvailable` false.
    ///
    /// The handler runs on the client's own thread, one state at a time and in order; it should
    /// hand the state on (to a loop, a queue) rather than block. The returned token keeps the
    /// client's connection and the handler alive: cancel it, or release it, to stop. Unlike
    /// `states()` this needs no Swift concurrency, so a program built on an `EventLoop` wakes
    /// only when the state changes.
    public func observe(_ handler: @escaping @Sendable (IndicatorSnapshot) -> Void) -> Observation {
        follow(keepingClient: true, {}, handler)
    }

    /// The one way to follow the session's states, for `states()` and `observe(_:)`.
    /// `finished` runs when the client goes first (only possible without `keepingClient`).
    private func follow(
        keepingClient: Bool, _ finished: @escaping @Sendable () -> Void,
        _ handler: @escaping @Sendable (IndicatorSnapshot) -> Void
    ) -> Observation {
        let gate = ObservationGate()
        guard let handle else {
            handler(.unavailable)
            finished()
            _ = gate.close()
            return Observation(gate: gate, stop: {})
        }
        let id = nextLocalID.add(1, ordering: .relaxed).newValue
        let observer = StateObserver(
            deliver: { state in if gate.isOpen { handler(state) } },
            finish: { if gate.close() { finished() } })
        handle.perform { $0.addObserver(id, observer) }
        if keepingClient {
            return Observation(gate: gate, stop: { handle.perform { $0.removeObserver(id) } })
        }
        return Observation(gate: gate, stop: { [weak handle] in handle?.perform { $0.removeObserver(id) } })
    }

    /// The indicator's state now, with everything this client reported before the call:
    /// activities it began, reports it made and activities it ended are in it.
    public func snapshot() async -> IndicatorSnapshot {
        // The service announces each change before its reply: once every call is answered, the
        // state the client holds (or asks for afresh) includes them.
        await flush()
        for await state in states() { return state }
        return .unavailable
    }

    /// Waits until everything reported so far has been answered by the service (or found it
    /// unavailable). Useful before exiting and in tests.
    public func flush() async {
        guard let handle else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            handle.perform { $0.flush { continuation.resume() } }
        }
    }
}
