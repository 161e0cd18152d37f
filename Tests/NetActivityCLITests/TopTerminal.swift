import BusTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real terminal for `netactivity top`: bash in the one pane of a tmux server of its own,
/// started in a directory of its own with an empty configuration. `close()` (or release) kills
/// the server and the shell in it and removes the directory.
final class TopTerminal {
    let directory: String
    /// The shell's process id.
    let shellPID: Int32
    private let socket: String
    private var closed = false

    init(columns: Int = 100, rows: Int = 30) throws {
        try requireTool("tmux")
        try requireTool("bash")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("netactivity-top-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/tmux"
        let environment = [
            "HOME": directory, "PS1": "$ ", "HISTFILE": "/dev/null", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
        ]
        // The server takes its environment from the process that starts it, and gives it to the pane.
        let started = try run(
            "tmux",
            ["-u", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-c", directory, "-x", "\(columns)", "-y",
             "\(rows)", "PS1='$ ' exec bash --noprofile --norc -i"],
            environment: environment)
        guard started.succeeded else { throw BusTestError("tmux did not start: \(started)") }
        let shown = try run("tmux", ["-u", "-S", socket, "display-message", "-p", "#{pane_pid}"])
        guard let pid = Int32(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            _ = try? run("tmux", ["-S", socket, "kill-server"])
            throw BusTestError("tmux names no pane pid: \(shown)")
        }
        shellPID = pid
    }

    deinit {
        close()
    }

    /// Kills the tmux server with the shell and whatever runs in it.
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? tmux(["kill-server"])
        try? waitUntil("the shell to exit", timeout: .seconds(5)) { kill(shellPID, 0) != 0 }
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> ProcessResult {
        let result = try run("tmux", ["-u", "-S", socket] + arguments)
        guard result.succeeded else { throw BusTestError("tmux \(arguments): \(result)") }
        return result
    }

    /// Types `line` and Enter.
    func type(_ line: String) throws {
        try tmux(["send-keys", "-l", "--", line])
        try tmux(["send-keys", "Enter"])
    }

    /// Presses one key, in tmux's words: "q", "C-c", "C-z".
    func press(_ key: String) throws {
        try tmux(["send-keys", key])
    }

    /// What the pane shows now: the alternate screen while a program uses it.
    func screen() -> String {
        (try? tmux(["capture-pane", "-p"]))?.stdout ?? ""
    }

    /// The main screen and its scrollback, wrapped lines joined.
    func history() -> String {
        (try? tmux(["capture-pane", "-p", "-J", "-S", "-100"]))?.stdout ?? ""
    }

    /// The screen's lines without trailing blanks.
    func lines() -> [String] {
        screen().components(separatedBy: "\n").map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// A tmux format about the pane: "#{alternate_on}", "#{cursor_flag}".
    func format(_ format: String) throws -> String {
        try tmux(["display-message", "-p", format]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until the screen satisfies `condition`; on failure the error shows the screen.
    func waitForScreen(_ what: String, timeout: Duration = .seconds(10), _ condition: ([String]) -> Bool) throws {
        do {
            try waitUntil(what, timeout: timeout) { condition(lines()) }
        } catch {
            throw BusTestError("\(error); the terminal shows:\n\(screen())")
        }
    }

    /// Resizes the window, as a terminal emulator's window is resized.
    func resize(columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// The shell's children: the foreground program.
    func children() -> [Int32] {
        let tasks = (try? String(contentsOfFile: "/proc/\(shellPID)/task/\(shellPID)/children", encoding: .utf8)) ?? ""
        return tasks.split(separator: " ").compactMap { Int32($0) }
    }
}
