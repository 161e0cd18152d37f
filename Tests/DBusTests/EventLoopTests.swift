import BusTestSupport
import DBus
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The poll(2) loop: timers, work posted from other threads, stopping, and signals.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct EventLoopTests {
    // MARK: - Timers

    @Test func timersFireOnceInDeadlineOrder() throws {
        let loop = try EventLoop()
        let fired = Log<String>()
        let done = DispatchSemaphore(value: 0)
        loop.schedule(after: .milliseconds(30)) { fired.append("c") }
        loop.schedule(after: .milliseconds(10)) { fired.append("a") }
        loop.schedule(after: .milliseconds(40)) { fired.append("d") }
        loop.schedule(after: .milliseconds(20)) { fired.append("b") }
        loop.schedule(after: .zero) { fired.append("now") }
        // Comes after all the others; anything firing twice would show up before it.
        loop.schedule(after: .milliseconds(80)) { fired.append("end"); done.signal() }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(done, for: "the last timer")
        #expect(fired.all == ["now", "a", "b", "c", "d", "end"])
    }

    /// Keeps the loop's first turn busy until `duration` has passed, so every timer due by
    /// then fires in that one turn.
    static func holdFirstTurn(of loop: EventLoop, for duration: Duration) {
        let until = monotonicNow() + duration
        loop.post {
            while monotonicNow() < until {}
        }
    }

    @Test func timersDueInTheSameTurnFireInDeadlineOrder() throws {
        let loop = try EventLoop()
        let fired = Log<Int>()
        let done = DispatchSemaphore(value: 0)
        // Later scheduled and longer delayed: deadlines strictly increase with the index,
        // whatever order the loop keeps its timers in.
        for index in 0..<40 {
            loop.schedule(after: .microseconds(10 * index)) { fired.append(index) }
        }
        loop.schedule(after: .milliseconds(20)) { done.signal() }
        Self.holdFirstTurn(of: loop, for: .milliseconds(5))
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(done, for: "the last timer")
        #expect(fired.all == Array(0..<40))
    }

    @Test func cancelledTimerNeverFires() throws {
        let loop = try EventLoop()
        let fired = Log<String>()
        let done = DispatchSemaphore(value: 0)
        let cancelled = loop.schedule(after: .milliseconds(5)) { fired.append("cancelled") }
        loop.cancel(cancelled)
        let later = loop.schedule(after: .milliseconds(30)) { fired.append("cancelled by an earlier timer") }
        loop.schedule(after: .milliseconds(10)) {
            fired.append("canceller")
            loop.cancel(later)
        }
        let immediate = loop.schedule(after: .zero) { fired.append("cancelled immediate") }
        loop.cancel(immediate)
        loop.schedule(after: .milliseconds(60)) { fired.append("end"); done.signal() }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(done, for: "the last timer")
        #expect(fired.all == ["canceller", "end"])
        // Cancelling a timer that already fired is harmless.
        try thread.sync { loop.cancel(later); loop.cancel(cancelled) }
    }

    /// The loop keeps the earliest deadline; cancelling that timer leaves it stale (early),
    /// which must cost at most a turn: later timers still fire, in order and not early.
    @Test func cancellingTheEarliestTimerDelaysNothingElse() throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let fired = Log<String>()
        let elapsed = Locked<Duration?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.post {
            let start = monotonicNow()
            let earliest = loop.schedule(after: .milliseconds(5)) { fired.append("cancelled") }
            loop.schedule(after: .milliseconds(30)) {
                fired.append("second")
                elapsed.withLock { $0 = monotonicNow() - start }
                done.signal()
            }
            loop.schedule(after: .milliseconds(20)) { fired.append("first") }
            loop.cancel(earliest)
        }
        try wait(done, for: "the 30 ms timer")
        #expect(fired.all == ["first", "second"])
        let measured = try #require(elapsed.withLock { $0 })
        #expect(measured >= .milliseconds(30), "fired after \(measured)")
    }

    @Test func cancelInTheSameTurnStopsATimerThatIsAlreadyDue() throws {
        let loop = try EventLoop()
        let fired = Log<String>()
        let done = DispatchSemaphore(value: 0)
        var second: EventLoop.TimerID?
        loop.schedule(after: .nanoseconds(-2)) {
            fired.append("first")
            if let second { loop.cancel(second) }
        }
        second = loop.schedule(after: .microseconds(1)) { fired.append("second") }
        loop.schedule(after: .milliseconds(20)) { done.signal() }
        Self.holdFirstTurn(of: loop, for: .milliseconds(2))
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(done, for: "the last timer")
        #expect(fired.all == ["first"])
    }

    @Test(arguments: [1, 15, 40])
    func timersDoNotFireEarly(milliseconds: Int) throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let elapsed = Locked<Duration?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.post {
            let start = monotonicNow()
            loop.schedule(after: .milliseconds(milliseconds)) {
                elapsed.withLock { $0 = monotonicNow() - start }
                done.signal()
            }
        }
        try wait(done, for: "a \(milliseconds) ms timer")
        let measured = try #require(elapsed.withLock { $0 })
        #expect(measured >= .milliseconds(milliseconds), "fired after \(measured)")
    }

    @Test func timerScheduledFromATimerFires() throws {
        let loop = try EventLoop()
        let done = DispatchSemaphore(value: 0)
        loop.schedule(after: .milliseconds(1)) {
            loop.schedule(after: .milliseconds(5)) {
                loop.schedule(after: .zero) { done.signal() }
            }
        }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(done, for: "the third chained timer")
    }

    // MARK: - A clock moved by hand

    @Test func timersOnAClockMovedByHandFireWhenItPassesTheirDeadlinesAndNotBefore() throws {
        let clock = HandClock()
        let loop = try EventLoop(clock: clock)
        let fired = Log<String>()
        loop.schedule(after: .seconds(20)) { fired.append("20 s") }
        loop.schedule(after: .seconds(10)) { fired.append("10 s") }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        clock.advance(by: .milliseconds(9_999))
        try Self.settle(thread)
        #expect(fired.all.isEmpty, "fired before its deadline on the loop's clock")
        clock.advance(by: .milliseconds(1))
        try waitUntil("the 10 s timer") { fired.all == ["10 s"] }
        // A timer scheduled now counts from the clock's reading, not from the real clock's.
        _ = try thread.sync { loop.schedule(after: .seconds(1)) { fired.append("11 s") } }
        clock.advance(by: .seconds(60))
        try waitUntil("the later timers") { fired.all.count == 3 }
        #expect(fired.all == ["10 s", "11 s", "20 s"])
    }

    @Test func aTimerOnAClockMovedByHandNeverWaitsForRealTime() throws {
        let clock = HandClock()
        let loop = try EventLoop(clock: clock)
        let fired = Log<String>()
        loop.schedule(after: .milliseconds(1)) { fired.append("1 ms") }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        // Real milliseconds pass while the clock stands still: the loop sleeps without firing.
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .milliseconds(20) { try Self.settle(thread) }
        #expect(fired.all.isEmpty)
        clock.advance(by: .milliseconds(1))
        try waitUntil("the timer") { fired.all == ["1 ms"] }
    }

    /// Returns after the loop has finished a turn that began after this call: what was due on
    /// its clock by then has fired (posted work runs before a turn's timers, so twice).
    static func settle(_ thread: RunningLoop) throws {
        try thread.sync {}
        try thread.sync {}
    }

    // MARK: - Posting and stopping

    @Test func postedWorkRunsOnTheLoopThreadInOrder() throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let loopThreadID = try thread.sync { pthread_self() }
        #expect(pthread_equal(loopThreadID, pthread_self()) == 0)

        let ranOnLoop = Log<Bool>()
        let order = Log<(Int, Int)>()
        let group = DispatchGroup()
        for poster in 0..<4 {
            group.enter()
            let posting = Thread {
                for index in 0..<100 {
                    loop.post {
                        ranOnLoop.append(pthread_equal(pthread_self(), loopThreadID) != 0)
                        order.append((poster, index))
                    }
                }
                group.leave()
            }
            posting.start()
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        try thread.sync {}
        #expect(ranOnLoop.all.count == 400)
        #expect(ranOnLoop.all.allSatisfy { $0 })
        for poster in 0..<4 {
            #expect(order.all.filter { $0.0 == poster }.map(\.1) == Array(0..<100))
        }
    }

    @Test func workPostedOnTheLoopRunsInTheNextTurnWithNothingElseToWakeIt() throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        #expect(!loop.isCurrent)
        let order = Log<String>()
        let done = DispatchSemaphore(value: 0)
        loop.post {
            order.append("first, on the loop: \(loop.isCurrent)")
            // No pipe write from here: the loop must not sleep while this waits.
            loop.post {
                order.append("posted from the loop")
                done.signal()
            }
            order.append("rest of the turn")
        }
        try wait(done, for: "work posted from the loop's own thread")
        #expect(order.all == ["first, on the loop: true", "rest of the turn", "posted from the loop"])
    }

    @Test func aCancelledTimerLeavesNoWakeUpBehind() throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let fired = Log<String>()
        try thread.sync {
            let soon = loop.schedule(after: .milliseconds(20)) { fired.append("cancelled") }
            loop.schedule(after: .seconds(60)) { fired.append("far") }
            loop.cancel(soon)
        }
        let window = try IdleWindow.measure(thread)
        #expect(window.wakeUps == 0, "\(window)")
        #expect(fired.all.isEmpty)
    }

    @Test func stopFromAnotherThreadEndsAnIdleRun() throws {
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        // Nothing is scheduled: the loop sleeps in poll(2) with no timeout until woken.
        try thread.stop(timeout: .seconds(5))
    }

    @Test func stopEndsRunWithTimersPending() throws {
        let loop = try EventLoop()
        let fired = Log<String>()
        loop.schedule(after: .seconds(60)) { fired.append("far future") }
        let thread = try RunningLoop(loop)
        try thread.stop(timeout: .seconds(5))
        #expect(fired.all.isEmpty)
    }

    @Test func stoppedLoopRunsAgain() throws {
        let loop = try EventLoop()
        try RunningLoop(loop).stop()
        let fired = Log<String>()
        let done = DispatchSemaphore(value: 0)
        loop.schedule(after: .milliseconds(1)) { fired.append("second run"); done.signal() }
        let again = try RunningLoop(loop)
        defer { try? again.stop() }
        try wait(done, for: "a timer in the second run")
        #expect(fired.all == ["second run"])
    }

    @Test func stopBeforeRunIsNotLost() throws {
        // A thread that starts a loop and asks it to stop straight away must not depend on the
        // loop thread having reached run() first.
        let loop = try EventLoop()
        loop.stop()
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.start()
        let returned = finished.wait(timeout: .now() + 2) == .success
        #expect(returned, "run() kept going after stop() was called before it started")
        if !returned {
            loop.stop()
            try wait(finished, for: "run() to return after a second stop()")
        }
    }

    /// Where a connection gets attached to a running loop.
    enum AttachedFrom: CaseIterable {
        /// A timer's action.
        case timer
        /// The handler of the only other connection, which detaches itself first (a client
        /// replacing a lost connection does this).
        case handler
    }

    /// A connection can arrive with messages libdbus already read (here: a signal read while
    /// a blocking call waited for its reply), and libdbus reports only changes of the dispatch
    /// status. Attached on a running loop, it must still be dispatched at once.
    @Test(arguments: AttachedFrom.allCases)
    func aConnectionAttachedWithMessagesQueuedIsDispatched(from place: AttachedFrom) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let listener = try Connection(.address(bus.address))
        try listener.addMatch("type='signal',interface='io.github.netactivity.Test1',member='Queued'")
        let arrived = DispatchSemaphore(value: 0)
        listener.addFilter(for: .signal) { message in
            if message.isSignal("io.github.netactivity.Test1", "Queued") { arrived.signal() }
            return false
        }
        let emitter = try Connection(.address(bus.address))
        try emitter.send(.signal(path: "/", interface: "io.github.netactivity.Test1", member: "Queued"))
        emitter.flush()
        // The bus sends the signal before the reply to this later call, so the call reads it.
        _ = try listener.call(
            .methodCall(
                destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId"))

        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        switch place {
        case .timer:
            loop.post { loop.schedule(after: .milliseconds(1)) { loop.attach(listener) } }
        case .handler:
            let other = try Connection(.address(bus.address))
            try other.addMatch("type='signal',interface='io.github.netactivity.Test1',member='Switch'")
            other.addFilter(for: .signal) { message in
                guard message.isSignal("io.github.netactivity.Test1", "Switch") else { return false }
                loop.detach(other)
                loop.attach(listener)
                return true
            }
            try thread.sync { loop.attach(other) }
            try emitter.send(.signal(path: "/", interface: "io.github.netactivity.Test1", member: "Switch"))
            emitter.flush()
        }
        try wait(arrived, for: "the signal queued before the connection was attached")
    }

    // MARK: - Idle

    @Test func idleLoopWithAConnectionStaysAsleep() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Connection(.address(bus.address))
        // The bus's greeting may still be on its way; the window must not include reading it.
        let greeted = DispatchSemaphore(value: 0)
        connection.addFilter { message in
            if message.isSignal(.bus, "NameAcquired") { greeted.signal() }
            return false
        }
        let loop = try EventLoop()
        loop.attach(connection)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try wait(greeted, for: "NameAcquired at the filter")
        let usage = try IdleWindow.measure(thread)
        #expect(usage.cpu < .milliseconds(20), "\(usage)")
        #expect(usage.wakeUps <= 1, "\(usage)")
    }

    @Test func loopStaysAsleepAfterTheBusDies() throws {
        let bus = try PrivateBus()
        let connection = try Connection(.address(bus.address))
        let disconnected = DispatchSemaphore(value: 0)
        connection.addFilter { message in
            if message.isSignal(.local, "Disconnected") { disconnected.signal() }
            return false
        }
        let loop = try EventLoop()
        loop.attach(connection)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        bus.kill()
        try wait(disconnected, for: "Disconnected at the filter")
        let usage = try IdleWindow.measure(thread)
        #expect(usage.cpu < .milliseconds(20), "a dead connection keeps the loop busy: \(usage)")
        #expect(usage.wakeUps <= 1, "a dead connection keeps the loop busy: \(usage)")
    }

    // MARK: - Reading at most once per interval

    /// 20 signals 10 ms apart on a connection read at most every 300 ms: the first is read at
    /// once, the rest arrive while it is held and are read together when the hold ends; none
    /// is lost or reordered.
    @Test func aPacedConnectionReadsAStreamInBatchesAndLosesNothing() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let times = Locked<[(number: UInt32, at: ContinuousClock.Instant)]>([])
        let all = DispatchSemaphore(value: 0)
        let thread = try Self.pacedListener(on: bus, hearing: "Tick", every: .milliseconds(300)) { message in
            guard case .uint32(let number)? = try? message.arguments().first else { return }
            let count = times.withLock {
                $0.append((number, ContinuousClock.now))
                return $0.count
            }
            if count == 20 { all.signal() }
        }
        defer { try? thread.stop() }
        let emitter = try Connection(.address(bus.address))
        for number in 0..<20 as Range<UInt32> {
            try emitter.send(.signal(path: "/", interface: "io.github.netactivity.Test1", member: "Tick", arguments: [.uint32(number)]))
            emitter.flush()
            usleep(10_000)
        }
        try wait(all, for: "the 20 signals at the paced connection")
        let received = times.withLock { $0 }
        #expect(received.map(\.number) == Array(0..<20))
        // Batches: runs of signals handled within 5 ms of the one before. Read one by one, the
        // 20 signals 10 ms apart would be 20 batches.
        var batches = 1
        for (earlier, later) in zip(received, received.dropFirst()) where later.at - earlier.at > .milliseconds(5) {
            batches += 1
        }
        #expect(batches <= 4, "\(batches) batches for 20 signals in 200 ms, read at most every 300 ms")
    }

    /// A burst far larger than libdbus reads at a time (5,000 signals, some 450 KB) on a
    /// connection read at most every 100 ms: each turn reads on while more is waiting, so the
    /// burst is in within a few intervals, not one 2 KiB read per interval (over 20 s).
    @Test func aPacedConnectionDrainsABurstInAFewIntervals() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let count = Atomic<Int>(0)
        let all = DispatchSemaphore(value: 0)
        let thread = try Self.pacedListener(on: bus, hearing: "Burst", every: .milliseconds(100)) { _ in
            if count.add(1, ordering: .relaxed).newValue == 5_000 { all.signal() }
        }
        defer { try? thread.stop() }
        let emitter = try Connection(.address(bus.address))
        let label = Value.string(String(repeating: "x", count: 40))
        for number in 0..<5_000 as Range<UInt32> {
            try emitter.send(
                .signal(path: "/", interface: "io.github.netactivity.Test1", member: "Burst", arguments: [.uint32(number), label]))
        }
        emitter.flush()
        try wait(all, for: "the 5,000 signals at the paced connection", seconds: 5)
    }

    /// A connection to `bus` that hands each `member` signal of the test interface to `heard`,
    /// attached to a loop of its own that reads it at most every `interval`; the loop keeps it.
    private static func pacedListener(
        on bus: PrivateBus, hearing member: MemberName, every interval: Duration,
        _ heard: @escaping @Sendable (Message) -> Void
    ) throws -> RunningLoop {
        let listener = try Connection(.address(bus.address))
        try listener.addMatch("type='signal',interface='io.github.netactivity.Test1',member='\(member)'")
        listener.addFilter(for: .signal) { message in
            guard message.isSignal("io.github.netactivity.Test1", member) else { return false }
            heard(message)
            return true
        }
        let loop = try EventLoop()
        let thread = try RunningLoop(loop)
        try thread.sync { loop.attach(listener, readingAtMostEvery: interval) }
        return thread
    }

    // MARK: - Descriptors hanging up

    /// The write end of a pipe whose reader closes: the action runs once, with no timer and no
    /// wake-up while the reader is still there.
    @Test func aPipeWhoseReaderClosesRunsTheHangUpActionOnce() throws {
        let loop = try EventLoop()
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[1]) }
        let hungUp = Log<String>()
        let done = DispatchSemaphore(value: 0)
        loop.onHangUp(of: ends[1]) { hungUp.append("hung up"); done.signal() }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        // A turn with the reader still open reports nothing.
        let turned = DispatchSemaphore(value: 0)
        loop.post { turned.signal() }
        try wait(turned, for: "a turn of the loop")
        #expect(hungUp.all.isEmpty)

        close(ends[0])
        try wait(done, for: "the hang-up action")
        // Later turns poll it no more: the still hung-up descriptor runs nothing again.
        let later = DispatchSemaphore(value: 0)
        loop.post { later.signal() }
        try wait(later, for: "a later turn")
        #expect(hungUp.all == ["hung up"])
    }

    // MARK: - Input

    /// A descriptor with input runs its reader on the loop each time input comes, and at its
    /// end; a reader that says it is done is polled no more.
    @Test func aReaderRunsForEachInputUntilItIsDone() throws {
        let loop = try EventLoop()
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let read = Log<String>()
        let arrived = DispatchSemaphore(value: 0)
        loop.onReadable(ends[0]) {
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = Glibc.read(ends[0], &buffer, buffer.count)
            read.append(count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : "end")
            arrived.signal()
            return count > 0
        }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let turned = DispatchSemaphore(value: 0)
        loop.post { turned.signal() }
        try wait(turned, for: "a turn of the loop")
        #expect(read.all.isEmpty, "no input, no call")

        _ = "q".withCString { Glibc.write(ends[1], $0, 1) }
        try wait(arrived, for: "the first input")
        _ = "x".withCString { Glibc.write(ends[1], $0, 1) }
        try wait(arrived, for: "the second input")
        close(ends[1])
        try wait(arrived, for: "the end of input")
        let later = DispatchSemaphore(value: 0)
        loop.post { later.signal() }
        try wait(later, for: "a later turn")
        #expect(read.all == ["q", "x", "end"])
    }

    // MARK: - Signals

    @Test func signalRunsItsActionOnTheLoop() throws {
        let loop = try EventLoop()
        let done = DispatchSemaphore(value: 0)
        let onLoop = Log<Bool>()
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let loopThreadID = try thread.sync { pthread_self() }
        try thread.sync {
            loop.onSignal(SIGUSR2) {
                onLoop.append(pthread_equal(pthread_self(), loopThreadID) != 0)
                done.signal()
            }
        }
        kill(getpid(), SIGUSR2)
        try wait(done, for: "the SIGUSR2 action")
        #expect(onLoop.all == [true])
    }
}

/// What one thread did during a quarter of a second in which it had nothing to do.
///
/// Idleness has no event to wait for: the window is a measurement, not a synchronisation.
struct IdleWindow: CustomStringConvertible {
    var cpu: Duration
    var wakeUps: Int

    var description: String { "\(cpu) on the CPU and \(wakeUps) wake-ups in 250 ms" }

    static func measure(_ thread: RunningLoop) throws -> IdleWindow {
        let tid = try thread.sync { currentThreadID() }
        // Let the turn that ran `sync` settle back into poll(2) before the window opens: `sync`
        // returns as its work signals, before the turn ends and the thread sleeps (one switch).
        try thread.sync {}
        try waitUntil("the loop thread asleep again") { try isSleeping(tid) }
        let before = try sample(tid)
        Thread.sleep(forTimeInterval: 0.25)
        let after = try sample(tid)
        return IdleWindow(
            cpu: .nanoseconds(Int64((after.cpuNanoseconds ?? 0) - (before.cpuNanoseconds ?? 0))),
            wakeUps: Int(after.voluntarySwitches - before.voluntarySwitches))
    }

    /// Whether the thread is asleep (state `S`).
    private static func isSleeping(_ tid: Int32) throws -> Bool {
        try sample(tid).state == "S"
    }

    /// The thread of this process, now.
    private static func sample(_ tid: Int32) throws -> ProcessStatistics.Thread {
        guard let thread = ProcessStatistics.thread(tid, of: getpid()), thread.cpuNanoseconds != nil else {
            throw BusTestError("cannot read /proc/self/task/\(tid)")
        }
        return thread
    }
}

/// The kernel's id for the calling thread; glibc's `gettid` is hidden from Swift's Glibc module.
private func currentThreadID() -> Int32 {
    typealias GetTID = @convention(c) () -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "gettid") else { return -1 }
    return unsafeBitCast(symbol, to: GetTID.self)()
}
