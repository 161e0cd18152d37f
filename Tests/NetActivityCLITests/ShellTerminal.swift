import BusTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real interactive shell in a terminal: bash, zsh or fish in a tmux pane of a tmux server
/// of its own, started with nothing but the shell integration in its startup file and the
/// private bus as its session bus. The tmux server (and with it the shell) is killed on close.
final class ShellTerminal {
    enum Shell: String {
        case bash, zsh, fish
    }

    let shell: Shell
    /// The shell's process id.
    let pid: Int32
    let directory: URL
    private let socket: String
    private var nextMark = 0
    private var closed = false

    /// Starts `shell` with `eval "$(netactivity shell-init SHELL)"` in its startup file.
    ///
    /// - Parameters:
    ///   - environment: more variables for the shell and `shell-init`.
    ///   - startup: lines of the startup file before the integration's.
    init(_ shell: Shell, busAddress: String, environment: [String: String] = [:], startup: String = "") throws {
        try requireTool("tmux")
        try requireTool(shell.rawValue)
        self.shell = shell
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("netactivity-shell-\(UUID().uuidString)")
        let runtime = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        socket = directory.appendingPathComponent("tmux").path
        let netactivity = try builtProduct("netactivity")

        let command: String
        switch shell {
        case .bash:
            let rc = directory.appendingPathComponent("bashrc")
            try "PS1='$ '\nHISTFILE=\(directory.path)/history\n\(startup)\neval \"$('\(netactivity)' shell-init bash)\"\n"
                .write(to: rc, atomically: true, encoding: .utf8)
            command = "exec bash --noprofile --rcfile '\(rc.path)' -i"
        case .zsh:
            try "PS1='$ '\nHISTFILE=\(directory.path)/history\n\(startup)\neval \"$('\(netactivity)' shell-init zsh)\"\n"
                .write(to: directory.appendingPathComponent(".zshrc"), atomically: true, encoding: .utf8)
            command = "exec zsh -i"
        case .fish:
            let config = directory.appendingPathComponent("config.fish")
            try "function fish_prompt; echo -n '$ '; end\nfunction fish_greeting; end\n\(startup)\n'\(netactivity)' shell-init fish | source\n"
                .write(to: config, atomically: true, encoding: .utf8)
            command = "exec fish --no-config -C 'source \(config.path)'"
        }
        var variables = [
            "DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": directory.path, "ZDOTDIR": directory.path,
            "XDG_RUNTIME_DIR": runtime.path, "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_DATA_HOME": directory.appendingPathComponent("data").path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
        ]
        variables.merge(environment) { $1 }
        // The server takes its environment from the process that starts it, and gives it to the pane.
        let started = try run(
            "tmux", ["-S", socket, "-f", "/dev/null", "new-session", "-d", "-x", "250", "-y", "50", command],
            environment: variables)
        guard started.succeeded else { throw BusTestError("tmux did not start: \(started)") }
        let shown = try run("tmux", ["-S", socket, "display-message", "-p", "#{pane_pid}"])
        guard let pid = Int32(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BusTestError("no pane pid: \(shown)")
        }
        self.pid = pid
        try settle()
    }

    deinit {
        close()
    }

    /// Kills the tmux server and the shell in it.
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? run("tmux", ["-S", socket, "kill-server"])
        // The shell saves its history as it leaves: only then is its directory done with.
        try? waitUntil("the shell to exit", timeout: .seconds(5)) { !isRunning(pid) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Types `line` and Enter.
    func type(_ line: String) throws {
        let typed = try run("tmux", ["-S", socket, "send-keys", "-l", "--", line])
        guard typed.succeeded else { throw BusTestError("send-keys: \(typed)") }
        let entered = try run("tmux", ["-S", socket, "send-keys", "Enter"])
        guard entered.succeeded else { throw BusTestError("send-keys: \(entered)") }
    }

    /// Waits until every line typed so far has run and the prompt is back: types `echo` of
    /// a mark (a builtin on a line of its own) and waits for its output.
    func settle(timeout: Duration = .seconds(15)) throws {
        nextMark += 1
        let mark = "settled-\(nextMark)"
        try type("echo \(mark)")
        do {
            try waitUntil("the \(shell.rawValue) prompt after \(mark)", timeout: timeout) {
                screen().split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == mark }
            }
        } catch {
            throw BusTestError("\(error); the terminal shows:\n\(screen())")
        }
    }

    /// What the pane shows, wrapped lines joined, with some scrollback.
    func screen() -> String {
        (try? run("tmux", ["-S", socket, "capture-pane", "-p", "-J", "-S", "-300"]))?.stdout ?? ""
    }

    /// The helpers started for this shell (`netactivity shell-helper --shell-pid PID`).
    func helpers() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let candidate = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard arguments.contains("shell-helper"), let flag = arguments.firstIndex(of: "--shell-pid"),
                flag + 1 < arguments.count, arguments[flag + 1] == String(pid)
            else { return nil }
            return candidate
        }
    }

    /// The shell's children right now.
    func children() -> [Int32] {
        let tasks = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return tasks.split(separator: " ").compactMap { Int32($0) }
    }
}

/// Whether `pid` runs (a zombie has finished).
func isRunning(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
    else { return false }
    return !stat[stat.index(after: end)...].hasPrefix(" Z")
}
