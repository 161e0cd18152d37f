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
        screen.enter()
        KeyReader.start(on: loop, reading: screen.input) { key in
            guard key == UInt8(ascii: "q") || key == UInt8(ascii: "Q") else { return }
            loop.stop()
        }
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
