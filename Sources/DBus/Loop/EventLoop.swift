import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A single-threaded poll(2) loop that drives libdbus connections, timers, work posted from
/// other threads, and POSIX signals.
///
/// Everything but `post(_:)` and `stop()` must be called on the thread that runs the loop (or
/// before it runs). When nothing is due the loop sleeps in poll(2) with no timeout: an idle
/// loop never wakes up.
public final class EventLoop: @unchecked Sendable {
    /// A timer's handle, for `cancel(_:)`.
    public struct TimerID: Hashable, Sendable {
        fileprivate let value: Int
    }

    private final class Timeout {
        let raw: LibdbusTimeout
        var deadline: UInt64
        init(raw: LibdbusTimeout, deadline: UInt64) {
            self.raw = raw
            self.deadline = deadline
        }
    }

    // Every turn reads the state below, a dozen accesses a turn, where the runtime's exclusivity
    // checks would be a measurable share of the loop's own cost (docs/benchmarks.md, "Why the hot
    // path looks the way it does"). It is safe without them: only the loop's thread touches it
    // (the class's rule for every caller; each turn asserts it in debug builds), and no access
    // spans a call that could reach back in: a turn iterates copies, as libdbus callbacks may
    // add or remove watches and timeouts meanwhile, a due timer is taken off the queue before
    // its action runs, and every other change is a plain collection operation.
    // `pollDescriptors` is held inout across poll(2), which calls nothing back.
    @exclusivity(unchecked) private var connections: [Connection] = []
    @exclusivity(unchecked) private var watches: [Watch] = []
    @exclusivity(unchecked) private var timeouts: [Timeout] = []
    @exclusivity(unchecked) private var timers = TimerQueue()
    @exclusivity(unchecked) private var nextTimerID = 0
    // Set by attach(): the next turn asks libdbus whether that connection has messages queued.
    @exclusivity(unchecked) private var attachedSinceAsked = false
    private var signalActions: [Int32: () -> Void] = [:]
    // Descriptors whose hang-up ends something (`onHangUp`), polled before the watches.
    @exclusivity(unchecked) private var hangUps: [(descriptor: Int32, action: () -> Void)] = []
    @exclusivity(unchecked) private var readers: [(descriptor: Int32, action: () -> Bool)] = []
    // Sockets read at most once per interval (`attach(_:readingAtMostEvery:)`), in nanoseconds,
    // and until when each is held after its last read, on CLOCK_MONOTONIC.
    @exclusivity(unchecked) private var readPaces: [Int32: UInt64] = [:]
    @exclusivity(unchecked) private var heldUntil: [Int32: UInt64] = [:]
    // Reused by every turn of the loop, so a turn allocates nothing.
    @exclusivity(unchecked) private var pollDescriptors: [pollfd] = []
    @exclusivity(unchecked) private var polledWatches: [Watch] = []

    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let posted = Locked<[@Sendable () -> Void]>([])
    // Whether `posted` may hold work: a turn checks this instead of taking the lock.
    private let hasPosted = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    /// The thread in `run()`, 0 when none (glibc's pthread_t is an address, never 0). An atomic,
    /// not a lock: libdbus asks "are we on the loop?" for every message sent.
    private let loopThread = Atomic<UInt>(0)
    // What the timers' deadlines are read on; nil for CLOCK_MONOTONIC, read directly because
    // every turn reads it.
    private let timerClock: (any TimeSource)?

    /// Creates a loop whose timers run on `clock`; nothing runs until `run()`.
    ///
    /// On a clock moved by hand (a test's), a timer fires on the first turn after the clock
    /// passes its deadline, and moving the clock wakes the loop: no timer waits on real time.
    ///
    /// - Throws: `Failed` if the wake-up pipe cannot be created.
    public init(clock: some TimeSource = SystemTime()) throws(BusError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BusError(.failed, "cannot create a pipe: errno \(errno)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        timerClock = clock is SystemTime ? nil : clock
        if !clock.movesByItself {
            // Weak: the clock may outlive the loop, and the pipe closes with it.
            clock.onAdvance { [weak self] in self?.wake() }
        }
    }

    deinit {
        for connection in connections { detach(connection) }
        for (signo, _) in signalActions { ProcessSignals.release(signo, from: wakeWrite) }
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: - Connections

    /// Lets the loop read, write and dispatch `connection`. The loop keeps it alive until
    /// `detach(_:)`.
    public func attach(_ connection: Connection) {
        connections.append(connection)
        connection.raw.drive(with: self)
        // What libdbus read before the loop drove this connection (during Hello or a blocking
        // call) is already queued, and libdbus reports changes of the dispatch status only:
        // the turn that attached it must ask before it sleeps.
        attachedSinceAsked = true
    }

    /// Lets the loop drive `connection` as `attach(_:)` does, reading it at most once per
    /// `interval`: after a turn that read from its socket, the socket is left unpolled for
    /// reading until `interval` has passed, so what arrives meanwhile is read together, in one
    /// wake-up, instead of one wake-up a message.
    ///
    /// For a connection that hears a stream nobody needs sooner (progress broadcast 100 times a
    /// second, shown a few times a second): everything on it, method calls included, is
    /// handled up to `interval` late. Sending is not held back. The end of a hold is one
    /// wake-up, after the last read of a stream; then nothing wakes the loop while nothing
    /// arrives.
    public func attach(_ connection: Connection, readingAtMostEvery interval: Duration) {
        attach(connection)
        if let descriptor = connection.raw.descriptor {
            readPaces[descriptor] = UInt64(clamping: max(0, interval.nanoseconds))
        }
    }

    /// Stops driving `connection`.
    public func detach(_ connection: Connection) {
        if let descriptor = connection.raw.descriptor {
            readPaces[descriptor] = nil
            heldUntil[descriptor] = nil
        }
        connection.raw.stopDriving()
        connections.removeAll { $0 === connection }
    }

    // Called by libdbus (Internals/Watches.swift) as it adds, removes and toggles them.
    func watchAdded(_ watch: Watch) { watches.append(watch) }
    func watchRemoved(_ watch: Watch) { watches.removeAll { $0 == watch } }
    func timeoutAdded(_ timeout: LibdbusTimeout) {
        timeouts.append(Timeout(raw: timeout, deadline: Self.deadline(of: timeout)))
    }
    func timeoutRemoved(_ timeout: LibdbusTimeout) { timeouts.removeAll { $0.raw == timeout } }
    func timeoutToggled(_ timeout: LibdbusTimeout) {
        for entry in timeouts where entry.raw == timeout { entry.deadline = Self.deadline(of: timeout) }
    }

    private static func deadline(of timeout: LibdbusTimeout) -> UInt64 {
        Clocks.monotonicNanoseconds() &+ UInt64(timeout.interval) &* 1_000_000
    }

    // MARK: - Timers

    /// Now on the timers' clock.
    private var timerNow: UInt64 { timerClock?.monotonicNanoseconds ?? Clocks.monotonicNanoseconds() }

    /// Runs `action` once on the loop after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerID {
        nextTimerID += 1
        let nanoseconds = UInt64(clamping: max(0, delay.nanoseconds))
        let deadline = timerNow &+ nanoseconds
        timers.insert(id: nextTimerID, deadline: deadline, action: action)
        return TimerID(value: nextTimerID)
    }

    /// Cancels a timer that has not fired; harmless if it has.
    public func cancel(_ timer: TimerID) {
        timers.cancel(timer.value)
    }

    // MARK: - Work from other threads

    /// Runs `work` on the loop's thread soon, never within the caller's own turn. Safe from any
    /// thread.
    public func post(_ work: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(work) }
        hasPosted.store(true, ordering: .releasing)
        // From the loop's own thread the next poll sees `hasPosted` and does not sleep, so a
        // write to the wake pipe would only cost a system call and one more turn.
        if !isCurrent { wake() }
    }

    /// Whether the caller runs on this loop's thread, inside `run()`.
    public var isCurrent: Bool {
        loopThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Checks, in debug builds, the rule an object confined to this loop keeps (the rule its
    /// `@unchecked Sendable` rests on): it is touched on the loop's thread while the loop runs,
    /// and on one thread only before and after (`loopThread` is 0 then).
    public func assertConfined(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        let thread = loopThread.load(ordering: .acquiring)
        assert(thread == 0 || thread == UInt(pthread_self()), "\(what()) touched off its loop's thread", file: file, line: line)
        #endif
    }

    /// Makes `run()` return after the current turn. Safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    private func wake() {
        // 0 means "look around"; signal numbers (1...64) travel through the same pipe.
        var byte: UInt8 = 0
        _ = write(wakeWrite, &byte, 1)
    }

    /// Wakes the loop if the caller is another thread: libdbus asks for this when a send from
    /// another thread queued data that only the loop's poll would write out.
    func wakeFromLibdbus() {
        if !isCurrent { wake() }
    }

    // MARK: - Signals

    /// Runs `action` on the loop when the process receives `signo` (e.g. SIGTERM).
    ///
    /// Signals belong to the process, not to a loop: `signo` goes to the loop that asked for it
    /// last, and a loop that had it before no longer sees it. When this loop goes away, the
    /// signals still routed to it get their default action back.
    public func onSignal(_ signo: Int32, _ action: @escaping () -> Void) {
        signalActions[signo] = action
        ProcessSignals.route(signo, to: wakeWrite)
    }

    // MARK: - Descriptors hanging up

    /// Runs `action` once on the loop when `descriptor` hangs up or fails: the write end of a
    /// pipe whose reader has gone (a panel that exited), a terminal that hung up, a descriptor
    /// that is not open. Only that is watched (poll(2) reports POLLHUP and POLLERR whatever it
    /// is asked), so a descriptor that stays open never wakes the loop.
    public func onHangUp(of descriptor: Int32, _ action: @escaping () -> Void) {
        hangUps.append((descriptor, action))
    }

    // MARK: - Descriptors with input

    /// Runs `action` on the loop each time `descriptor` has input to read, or has hung up, until
    /// it returns false: a terminal's keys, a pipe. Nothing runs, and nothing wakes the loop,
    /// while no input comes. Call it on the loop's thread, or before `run()`.
    public func onReadable(_ descriptor: Int32, _ action: @escaping () -> Bool) {
        readers.append((descriptor, action))
    }

    // MARK: - Running

    /// Runs until `stop()`; returns at once if `stop()` came first.
    public func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        defer {
            loopThread.store(0, ordering: .releasing)
            // Cleared on the way out, not on the way in: a stop() that came before run() counts.
            stopRequested.store(false, ordering: .sequentiallyConsistent)
        }
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            runOnce()
        }
    }

    /// One turn: run posted work, dispatch what libdbus has read, fire due timers, then sleep in
    /// poll(2) until a descriptor is ready or the next deadline.
    private func runOnce() {
        assert(loopThread.load(ordering: .relaxed) == UInt(pthread_self()), "a loop's turn off the loop's thread")
        if hasPosted.load(ordering: .acquiring) { runPostedWork() }
        let connections = self.connections
        dispatchAll(connections)
        var now = Clocks.monotonicNanoseconds()
        let fired = fireDueTimers(now: now, timerNow: timerClock?.monotonicNanoseconds ?? now)
        guard !stopRequested.load(ordering: .sequentiallyConsistent) else { return }

        // dispatchAll left every connection it saw with nothing to dispatch. Ask libdbus again
        // only when that may have changed: a timer ran (it may have read more with a blocking
        // call, or attached a connection), another connection's handler may have read more, or
        // a connection was attached with messages already queued.
        var pending = false
        if fired || attachedSinceAsked || self.connections.count > 1 {
            attachedSinceAsked = false
            pending = self.connections.contains { $0.raw.hasQueuedMessages }
        }
        polledWatches.removeAll(keepingCapacity: true)
        pollDescriptors.removeAll(keepingCapacity: true)
        pollDescriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        let hangUps = self.hangUps
        for hangUp in hangUps { pollDescriptors.append(pollfd(fd: hangUp.descriptor, events: 0, revents: 0)) }
        let readers = self.readers
        for reader in readers { pollDescriptors.append(pollfd(fd: reader.descriptor, events: Int16(POLLIN), revents: 0)) }
        for watch in watches where watch.isEnabled {
            var events = watch.pollEvents
            if !heldUntil.isEmpty, let until = heldUntil[watch.descriptor] {
                if until > now {
                    events &= ~Int16(POLLIN)
                    if events == 0 { continue }
                } else {
                    heldUntil[watch.descriptor] = nil
                }
            }
            polledWatches.append(watch)
            pollDescriptors.append(pollfd(fd: watch.descriptor, events: events, revents: 0))
        }
        if fired { now = Clocks.monotonicNanoseconds() }
        // Work posted from this thread during the turn woke nobody: run it next turn, at once.
        if hasPosted.load(ordering: .acquiring) { pending = true }
        let timeout = pending ? 0 : pollTimeout(now: now)
        let count = poll(&pollDescriptors, nfds_t(pollDescriptors.count), timeout)
        guard count > 0 else { return }

        if pollDescriptors[0].revents != 0 { drainWakePipe() }
        if !hangUps.isEmpty { handleHangUps(hangUps) }
        if !readers.isEmpty { handleReaders(readers, from: 1 + hangUps.count) }
        let watchesStart = 1 + hangUps.count + readers.count
        for (index, watch) in polledWatches.enumerated() {
            let revents = pollDescriptors[index + watchesStart].revents
            guard revents != 0, watches.contains(watch) else { continue }
            watch.handle(revents: revents)
            if !readPaces.isEmpty, revents & Int16(POLLIN) != 0, let interval = readPaces[watch.descriptor] {
                readPaced(watch, holdingFor: interval)
            }
        }
    }

    /// After `watch` was read: reads on while more is waiting (libdbus reads 2 KiB a time),
    /// then holds the socket for `interval`. A socket that still has more than the loop may
    /// read in one turn (a flood) is not held, so its backlog drains as fast as unpaced.
    private func readPaced(_ watch: Watch, holdingFor interval: UInt64) {
        var reads = 0
        while Self.isReadable(watch.descriptor) {
            guard reads < Self.pacedReadsPerTurn, watches.contains(watch), watch.isEnabled else { return }
            watch.handle(revents: Int16(POLLIN))
            reads += 1
        }
        heldUntil[watch.descriptor] = Clocks.monotonicNanoseconds() &+ interval
    }

    /// Reads of a paced socket in one turn at most: 128 KiB, some 900 launcher updates.
    private static let pacedReadsPerTurn = 64

    private static func isReadable(_ descriptor: Int32) -> Bool {
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&polled, 1, 0) > 0 && polled.revents & Int16(POLLIN) != 0
    }

    /// Runs the action of each descriptor in `polled` (this turn's, polled from index 1) that
    /// hung up, once: it is no longer polled, so a descriptor that stays hung up cannot spin.
    private func handleHangUps(_ polled: [(descriptor: Int32, action: () -> Void)]) {
        let hungUp = Int16(POLLHUP | POLLERR | POLLNVAL)
        for (index, hangUp) in polled.enumerated() where pollDescriptors[index + 1].revents & hungUp != 0 {
            hangUps.removeAll { $0.descriptor == hangUp.descriptor }
            hangUp.action()
        }
    }

    /// Runs the action of each reader in `polled` (this turn's, polled from `start`) whose
    /// descriptor is readable or hung up; one whose action says it is done is no longer polled.
    private func handleReaders(_ polled: [(descriptor: Int32, action: () -> Bool)], from start: Int) {
        for (index, reader) in polled.enumerated() where pollDescriptors[index + start].revents != 0 {
            if !reader.action() { readers.removeAll { $0.descriptor == reader.descriptor } }
        }
    }

    private func dispatchAll(_ connections: [Connection]) {
        for connection in connections {
            connection.dispatchQueued()
        }
    }

    private func runPostedWork() {
        let work = posted.withLock { queue in
            // Cleared under the lock: a post() after this sets it again for the next turn.
            hasPosted.store(false, ordering: .relaxed)
            let taken = queue
            queue.removeAll()
            return taken
        }
        for item in work { item() }
    }

    /// Handles libdbus timeouts due at `now` (CLOCK_MONOTONIC) and runs timers due at
    /// `timerNow` (the timers' clock); returns whether anything ran.
    private func fireDueTimers(now: UInt64, timerNow: UInt64) -> Bool {
        var fired = false
        for entry in timeouts where entry.raw.isEnabled && entry.deadline <= now {
            entry.deadline = Self.deadline(of: entry.raw)
            entry.raw.handle()
            fired = true
        }
        // Timers the actions schedule wait for the next turn, even when already due.
        let limit = nextTimerID + 1
        while let action = timers.popDue(at: timerNow, scheduledBefore: limit) {
            action()
            fired = true
        }
        return fired
    }

    /// Milliseconds from `now` until the next deadline, rounded up; -1 (sleep until woken)
    /// when none.
    private func pollTimeout(now: UInt64) -> Int32 {
        var next = UInt64.max
        for entry in timeouts where entry.raw.isEnabled { next = min(next, entry.deadline) }
        for until in heldUntil.values { next = min(next, until) }
        let wait = next == .max ? -1 : Self.milliseconds(from: now, to: next)
        guard timers.earliest != .max else { return wait }
        let clock = timerClock
        // A clock moved by hand wakes the loop as it moves: its timers wait on that, not on poll.
        if let clock, !clock.movesByItself { return timers.earliest <= clock.monotonicNanoseconds ? 0 : wait }
        let timerWait = Self.milliseconds(from: clock?.monotonicNanoseconds ?? now, to: timers.earliest)
        return wait < 0 ? timerWait : min(wait, timerWait)
    }

    /// Milliseconds from `now` to `deadline`, rounded up; 0 once it has passed.
    private static func milliseconds(from now: UInt64, to deadline: UInt64) -> Int32 {
        deadline > now ? Int32(clamping: (deadline - now + 999_999) / 1_000_000) : 0
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(wakeRead, &buffer, buffer.count)
            guard count > 0 else { break }
            for byte in buffer[0..<count] where byte > 0 {
                signalActions[Int32(byte)]?()
            }
        }
    }
}
