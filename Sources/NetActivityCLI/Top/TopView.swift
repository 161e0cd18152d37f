import DBus
import NetActivity
import NetActivityContract
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// What `top` shows, drawn when its `RedrawSchedule` says: on the event loop's thread only.
final class TopView: @unchecked Sendable {
    private let loop: EventLoop
    private let screen: TerminalScreen
    private var state: IndicatorSnapshot?
    private var history = RateHistory()
    private var notice: String?
    private var schedule = RedrawSchedule(interval: 1_000_000_000)
    /// Set exactly while `schedule` has a frame due.
    private var timer: EventLoop.TimerID?

    init(loop: EventLoop, screen: TerminalScreen) {
        self.loop = loop
        self.screen = screen
    }

    func show(_ state: IndicatorSnapshot) {
        self.state = state
        history.record(state.rate, at: Self.second(Self.now()))
        if state.serviceAvailable { notice = nil }
        changed()
    }

    /// A problem with a service, shown while no service is available.
    func noticed(_ problem: String) {
        notice = problem
        changed()
    }

    /// The terminal changed size: drawn again at once.
    func resized() {
        cancelTimer()
        draw()
    }

    /// Ctrl-Z: the terminal given back before the process stops, taken again when it goes on.
    func suspend() {
        screen.leave()
        kill(getpid(), SIGSTOP)
        screen.enter()
        resized()
    }

    /// Continued after a stop that was not its own (`kill -STOP`, then `fg`).
    func continued() {
        screen.reenter()
        resized()
    }

    func stop() {
        cancelTimer()
    }

    private func changed() {
        switch schedule.changed(at: Self.now()) {
        case .drawNow: draw()
        case .drawAt(let deadline): setTimer(for: deadline)
        case .alreadyDue: break
        }
    }

    private func draw() {
        guard let state else { return }
        let now = Self.now()
        let size = screen.size
        screen.draw(
            TopFrame(state: state, history: history, second: Self.second(now), size: size, notice: notice),
            columns: size.columns)
        if let next = schedule.drew(at: now, active: state.active) { setTimer(for: next) }
    }

    private func setTimer(for deadline: UInt64) {
        let now = Self.now()
        timer = loop.schedule(after: .nanoseconds(Int64(clamping: deadline > now ? deadline - now : 0))) { [self] in
            timer = nil
            // The tick runs only while something is active: its second is an active one.
            if let state, state.active { history.record(state.rate, at: Self.second(Self.now())) }
            draw()
        }
    }

    private func cancelTimer() {
        if let timer { loop.cancel(timer) }
        timer = nil
        schedule.cancel()
    }

    // MARK: - Time

    /// Now on CLOCK_MONOTONIC, in nanoseconds.
    static func now() -> UInt64 {
        Clocks.monotonicNanoseconds()
    }

    /// The history's second for a reading of `now()`.
    static func second(_ nanoseconds: UInt64) -> Int64 {
        Int64(nanoseconds / 1_000_000_000)
    }
}
