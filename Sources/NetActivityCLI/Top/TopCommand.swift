import DBus
import NetActivity
import NetActivityContract
import NetActivityTray
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity top`: the followed services' activities on the whole terminal, the busiest
/// first, redrawn as they change; or, with `--once`, one frame on standard output.
struct TopCommand {
    var services: FollowedServices
    var once: Bool

    func run() -> Int32 {
        once ? printOneFrame() : follow()
    }

    // MARK: - One frame

    /// Reads each service once, as `status` does, and prints the frame for the terminal's
    /// size, a line short to leave the prompt below it; into a pipe or a file, as wide as
    /// $COLUMNS (else 80) and as long as it takes.
    private func printOneFrame() -> Int32 {
        guard let state = CLI.readOnce(services) else { return 1 }
        let second = TopView.second(TopView.now())
        var history = RateHistory()
        history.record(state.rate, at: second)
        let columns = getenv("COLUMNS").flatMap { Int(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil }
        var size = TopFrame.Size(columns: columns ?? 80, rows: nil)
        if let terminal = TerminalScreen.size(of: 1) {
            size = TopFrame.Size(columns: terminal.columns, rows: terminal.rows.map { $0 - 1 })
        }
        let frame = TopFrame(state: state, history: history, second: second, size: size)
        Output.write(frame.lines.map { $0 + "\n" }.joined(), to: 1)
        return 0
    }

    // MARK: - Following

    private func follow() -> Int32 {
        guard let screen = TerminalScreen() else {
            Output.error("top: standard output is not a terminal (top --once prints one frame)")
            return 1
        }
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            Output.error("top: \(error.message)")
            return 1
        }
        let view = TopView(loop: loop, screen: screen)
        // Every way out goes through the end of run(), where the terminal is given back.
        for signo in [SIGINT, SIGTERM, SIGHUP] { loop.onSignal(signo) { loop.stop() } }
        loop.onSignal(SIGWINCH) { view.resized() }
        loop.onSignal(SIGTSTP) { view.suspend() }
        loop.onSignal(SIGCONT) { view.continued() }
        KeyReader.start(reading: screen.input) { key in
            guard key == UInt8(ascii: "q") || key == UInt8(ascii: "Q") else { return }
            loop.stop()
        }
        screen.enter()
        // Problems go on the screen, not to stderr, which is the same terminal.
        let following = services.observe(
            on: loop,
            problems: { message in
                guard !NetActivityClient.meansNoSystemBus(message) else { return }
                let text = message.contains(BusAddress.noSessionBusMessage) ? CLI.noSessionBus : message
                loop.post { view.noticed(text) }
            },
            view.show)
        loop.run()
        following.cancel()
        view.stop()
        screen.leave()
        return 0
    }
}

/// What `top` shows and when it draws: on the event loop's thread only.
///
/// A state that arrives draws at once if the last frame is a second old, else when it is: at
/// most a frame a second, however often the services signal. While something is active a tick
/// redraws every second (the rates, the time left, the sparkline move on); while nothing is,
/// nothing wakes.
final class TopView: @unchecked Sendable {
    private let loop: EventLoop
    private let screen: TerminalScreen
    private var state: IndicatorSnapshot?
    private var history = RateHistory()
    private var notice: String?
    private var lastDrawn: UInt64?
    private var timer: EventLoop.TimerID?

    /// The least time between two frames, and the tick while something is active.
    static let interval: UInt64 = 1_000_000_000

    init(loop: EventLoop, screen: TerminalScreen) {
        self.loop = loop
        self.screen = screen
    }

    func show(_ state: IndicatorSnapshot) {
        self.state = state
        history.record(state.rate, at: Self.second(Self.now()))
        if state.serviceAvailable { notice = nil }
        drawSoon()
    }

    /// A problem with a service, shown while no service is available.
    func noticed(_ problem: String) {
        notice = problem
        drawSoon()
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

    private func drawSoon() {
        guard timer == nil else { return }
        let now = Self.now()
        if let lastDrawn, now &- lastDrawn < Self.interval {
            schedule(after: lastDrawn + Self.interval - now)
        } else {
            draw()
        }
    }

    private func draw() {
        guard let state else { return }
        let now = Self.now()
        lastDrawn = now
        let size = screen.size
        screen.draw(
            TopFrame(state: state, history: history, second: Self.second(now), size: size, notice: notice),
            columns: size.columns)
        if state.active { schedule(after: Self.interval) }
    }

    private func schedule(after nanoseconds: UInt64) {
        timer = loop.schedule(after: .nanoseconds(Int64(nanoseconds))) { [self] in
            timer = nil
            if let state, state.active { history.record(state.rate, at: Self.second(Self.now())) }
            draw()
        }
    }

    private func cancelTimer() {
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    // MARK: - Time

    /// Now on CLOCK_MONOTONIC, in nanoseconds.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The history's second for a reading of `now()`.
    static func second(_ nanoseconds: UInt64) -> Int64 {
        Int64(nanoseconds / 1_000_000_000)
    }
}
