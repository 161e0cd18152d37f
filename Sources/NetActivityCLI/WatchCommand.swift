import NetActivity
import NetActivityTray

/// `netactivity watch`: a line per change of the followed services' merged state, for panels
/// reading a pipe.
struct WatchCommand {
    var services: FollowedServices
    var format: Invocation.WatchFormat

    func run() async -> Int32 {
        // Problems (service gone) show as idle lines, or as the other side's state alone;
        // stderr gets one line per outage.
        var last: String?
        for await state in services.states() {
            let line = render(state)
            guard line != last else { continue }
            last = line
            // The panel closed the pipe: nothing left to do.
            guard Output.write(line + "\n", to: 1) else { return 0 }
        }
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
