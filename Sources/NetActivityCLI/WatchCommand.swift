import DBus
import NetActivity
import NetActivityTray

/// `netactivity watch`: a line per change of the followed services' merged state, for panels
/// reading a pipe.
struct WatchCommand {
    var services: FollowedServices
    var format: Invocation.WatchFormat

    func run() -> Int32 {
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            Output.error("watch: \(error.message)")
            return 1
        }
        // Problems (service gone) show as idle lines, or as the other side's state alone;
        // stderr gets one line per outage.
        var last: String?
        let following = services.observe(on: loop, problems: CLI.problems) { state in
            let line = render(state)
            guard line != last else { return }
            last = line
            // The panel closed the pipe: nothing left to do.
            if !Output.write(line + "\n", to: 1) { loop.stop() }
        }
        // The panel went away while nothing changed: leave now, not at the next line's EPIPE,
        // which on an idle desktop may never come.
        loop.onHangUp(of: 1) { loop.stop() }
        loop.run()
        following.cancel()
        return 0
    }

    func render(_ state: IndicatorSnapshot) -> String {
        switch format {
        case .plain: SnapshotFormat.plain(state)
        case .json: SnapshotFormat.json(state)
        case .waybar: SnapshotFormat.waybar(state)
        }
    }
}
