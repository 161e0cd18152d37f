import NetActivity
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity run`: holds a tracked activity while a command runs, like `systemd-inhibit`.
struct RunCommand {
    var bus: Bus
    var label: String?
    var hints = ActivityHints()
    var command: [String]

    /// The label the activity gets: `--label`'s, or the command line, printable
    /// (`PrintableText`, a control character as a space) and cut on a character boundary to
    /// what the service accepts.
    var effectiveLabel: String {
        PrintableText.label(label ?? command.joined(separator: " "))
    }

    func run() async -> Int32 {
        // A long label is no reason not to run the command (a backup script would silently not
        // back up): it is cut, and said so once.
        if let label, label.utf8.count > Invocation.maximumLabelBytes {
            Output.error(
                "run: the label is \(label.utf8.count) bytes, more than the \(Invocation.maximumLabelBytes) the service "
                    + "accepts; using its first \(effectiveLabel.utf8.count)")
        }
        // Before any thread of ours exists: a signal from now on is passed on to the command
        // (or, if it comes before the command starts, delivered to it as soon as it does).
        Subprocess.forward(Self.forwarded)
        let client = NetActivityClient(bus: bus, problems: CLI.problems)
        let activity = client.begin(effectiveLabel, hints: hints)
        // The activity is registered (or the service found missing) before the command starts.
        await client.flush()
        let status = runCommand()
        activity.end()
        await client.flush()
        return status
    }

    /// The signals passed on to the command: a terminal's and a service manager's.
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Runs the command and waits. Returns its exit status, 128+N if signal N killed it, 127 if
    /// it could not be found and 126 if it could not be run.
    private func runCommand() -> Int32 {
        switch Subprocess.run(command, forwarded: Self.forwarded) {
        case .success(let termination):
            return termination.shellStatus
        case .failure(let error):
            Output.error("cannot run '\(command[0])': \(error)")
            return error == .noSuchFile ? 127 : 126
        }
    }
}
