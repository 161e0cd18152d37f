import BusTestSupport
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `eval "$(netactivity shell-init SHELL)"` in real interactive shells (in tmux) whose session
/// bus is a private one with the real service: `curl` against python's http.server on
/// 127.0.0.1 holds an activity labelled with its command line while it runs, other commands
/// fork nothing, and the activity ends with the shell.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized) struct ShellTests {
    @Test(arguments: [ShellTerminal.Shell.bash, .zsh, .fish])
    func curlHoldsAnActivityWhileItRuns(_ shell: ShellTerminal.Shell) throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let server = try ShellHTTPServer()
        let terminal = try ShellTerminal(shell, busAddress: service.address)
        defer { terminal.close() }

        let line = "curl -s -o /dev/null \(server.url)"
        try terminal.type(line)
        try waitUntil("an activity labelled '\(line)' while curl runs") {
            try probe.activities().map(\.label) == [line]
        }
        let activity = try #require(try probe.activities().first)
        #expect(try kind(of: activity, on: service) == "download")
        #expect(terminal.helpers().count == 1)

        try server.release()
        try terminal.settle()
        try waitUntil("the activity to end with curl") { try probe.count() == 0 }

        // The same helper serves the next command: one process per shell, not per command.
        let helpers = terminal.helpers()
        try terminal.type("git push --dry-run /nonexistent-remote 2>/dev/null; sleep 0.1")
        try terminal.settle()
        #expect(terminal.helpers() == helpers)
    }

    @Test(arguments: [ShellTerminal.Shell.bash, .zsh, .fish])
    func otherCommandsForkNothing(_ shell: ShellTerminal.Shell) throws {
        try requireTool("strace")
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let terminal = try ShellTerminal(shell, busAddress: service.address)
        defer { terminal.close() }

        // Every fork the shell makes from here on, written down by strace.
        let log = terminal.directory.appendingPathComponent("forks").path
        let tracer = try ChildProcess(
            "strace", ["-f", "-qq", "-e", "trace=fork,vfork,clone,clone3", "-e", "signal=none", "-o", log, "-p", String(terminal.pid)])
        try waitUntil("strace to attach to the shell") { try tracerPID(of: terminal.pid) != 0 }
        try terminal.type("true")
        try terminal.type("/bin/ls / >/dev/null")
        try terminal.type("x=1 builtin true git fetch")
        try terminal.settle()
        tracer.send(signal: SIGINT)
        _ = try tracer.waitForExit(timeout: .seconds(10))

        let forks = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("clone") || $0.contains("fork(") }
            .filter { !$0.contains("resumed>") && !$0.contains("CLONE_THREAD") }
        // `/bin/ls` is the one program run (by path: fish wraps `ls` in a function), so the one fork; `true`, `echo` and the hook fork nothing.
        // (Threads are no forks: fish runs some of its work on a thread pool.)
        #expect(forks.count == 1, "\(forks.joined(separator: "\n"))")
        #expect(terminal.helpers().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test(arguments: [ShellTerminal.Shell.bash, .zsh, .fish])
    func killingTheShellEndsTheActivity(_ shell: ShellTerminal.Shell) throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let server = try ShellHTTPServer()
        let terminal = try ShellTerminal(shell, busAddress: service.address)
        defer { terminal.close() }

        try terminal.type("curl -s -o /dev/null \(server.url)")
        try waitUntil("the activity while curl runs") { try probe.count() == 1 }
        let helpers = terminal.helpers()
        #expect(helpers.count == 1)

        // curl goes on (it still holds the terminal and waits for the server); the activity must not.
        kill(terminal.pid, SIGKILL)
        try waitUntil("the activity to end with the shell") { try probe.count() == 0 }
        try waitUntil("the helper to exit") { !helpers.contains(where: isRunning) }
        try server.release()
    }

    @Test(arguments: [ShellTerminal.Shell.bash, .zsh, .fish])
    func aLongCommandLineIsCutOnACharacterBoundary(_ shell: ShellTerminal.Shell) throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let server = try ShellHTTPServer()
        let terminal = try ShellTerminal(shell, busAddress: service.address)
        defer { terminal.close() }

        // 10 KB of two-byte characters, placed so that the service's 256 bytes end inside one.
        var line = "curl -s -o /dev/null \(server.url) -H 'X-Pad: "
        if line.utf8.count % 2 == 0 { line += "a" }
        line += String(repeating: "é", count: 5_000) + "'"
        try terminal.type(line)
        try waitUntil("the activity while curl runs", timeout: .seconds(20)) { try probe.count() == 1 }
        let label = try #require(try probe.activities().first?.label)
        #expect(label.utf8.count == 255)
        #expect(line.hasPrefix(label))

        try server.release()
        try terminal.settle()
        try waitUntil("the activity to end with curl") { try probe.count() == 0 }
    }

    @Test func bashKeepsThePromptCommandAndDebugTrapItHadUnderSetU() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let terminal = try ShellTerminal(
            .bash, busAddress: service.address,
            startup: """
                set -u
                traps=0
                trap 'traps=$((traps + 1))' DEBUG
                PROMPT_COMMAND='last=$?'
                """)
        defer { terminal.close() }

        try terminal.type("false")
        try terminal.type("echo \"last=$last traps=$((traps > 0))\"")
        try terminal.type("sleep 0 | curl --version >/dev/null")
        try terminal.settle()
        // The prompt command still sees the command's status, and the earlier trap still runs.
        #expect(terminal.screen().contains("\nlast=1 traps=1"), "\(terminal.screen())")
        #expect(!terminal.screen().contains("unbound variable"), "\(terminal.screen())")
        #expect(try probe.count() == 0)
        #expect(terminal.helpers().count == 1)
    }

    @Test(arguments: [ShellTerminal.Shell.bash, .zsh, .fish])
    func aLaterCommandOfTheLineMatchesAndADeadHelperIsReplaced(_ shell: ShellTerminal.Shell) throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let server = try ShellHTTPServer()
        let terminal = try ShellTerminal(shell, busAddress: service.address)
        defer { terminal.close() }

        try terminal.type("echo started; sleep 0")
        try terminal.type("env X=1 /bin/true --x; git status >/dev/null 2>&1")
        try terminal.settle()
        #expect(terminal.helpers().isEmpty)

        try terminal.type("curl --version >/dev/null")
        try terminal.settle()
        let first = terminal.helpers()
        #expect(first.count == 1)
        for pid in first { kill(pid, SIGKILL) }
        try waitUntil("the helper to be gone") { terminal.helpers().isEmpty }

        let line = "cd / && LC_ALL=C curl -s -o /dev/null \(server.url)"
        try terminal.type(line)
        try waitUntil("an activity labelled '\(line)'") { try probe.activities().map(\.label) == [line] }
        #expect(terminal.helpers().count == 1 && terminal.helpers() != first)
        try server.release()
        try terminal.settle()
        try waitUntil("the activity to end") { try probe.count() == 0 }
    }

    /// Between commands the helper sleeps: no thread of it is woken, no timer runs.
    @Test func anIdleHelperWakesNothing() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let terminal = try ShellTerminal(.bash, busAddress: service.address)
        defer { terminal.close() }
        try terminal.type("curl --version >/dev/null")
        try terminal.settle()
        let helper = try #require(terminal.helpers().first)
        try waitUntil("the activity to end") { try probe.count() == 0 }
        // Stragglers (the client's answers to its last calls) settle first.
        try waitUntil("the helper to settle") { try wakeUps(of: helper, over: 0.2).isEmpty }
        let woken = try wakeUps(of: helper, over: 2)
        #expect(woken.isEmpty, "an idle helper woke in 2 s: \(woken)")
    }

    @Test func theListCanBeChanged() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let terminal = try ShellTerminal(
            .bash, busAddress: service.address,
            environment: ["NETACTIVITY_SHELL_COMMANDS": "sleep=sync, git status=upload"])
        defer { terminal.close() }

        try terminal.type("curl --version >/dev/null")
        try terminal.type("sleep 30")
        try waitUntil("an activity for sleep") { try probe.activities().map(\.label) == ["sleep 30"] }
        let activity = try #require(try probe.activities().first)
        #expect(try kind(of: activity, on: service) == "sync")
    }

    // MARK: - The command line

    @Test func shellInitNamesOneKnownShell() throws {
        let service = try ServiceDaemon(startService: false)
        for arguments in [["shell-init"], ["shell-init", "tcsh"], ["shell-init", "bash", "zsh"]] {
            let result = try service.netactivity(arguments)
            #expect(result.exitStatus == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains("bash, zsh or fish"), "\(result.stderr)")
        }
        let help = try service.netactivity(["shell-init", "--help"])
        #expect(help.succeeded && help.stdout.contains("NETACTIVITY_SHELL_COMMANDS"), "\(help)")
        for arguments in [["shell-helper", "--shell-pid", "x"], ["shell-helper", "--shell-pid"], ["shell-helper", "now"]] {
            let result = try service.netactivity(arguments)
            #expect(result.exitStatus == 2, "\(arguments): \(result)")
        }
        // The bus options given to shell-init are the helper's.
        let script = try service.netactivity(["shell-init", "bash"])
        #expect(script.stdout.contains("'--address' '\(service.address)' 'shell-helper')"), "\(script.stdout)")
        let helperHelp = try service.netactivity(["help", "shell-helper"])
        #expect(helperHelp.succeeded && helperHelp.stdout.contains("begin KIND LABEL"), "\(helperHelp)")
    }

    @Test func aBadEntryIsLeftOutAndSaid() throws {
        let netactivity = try builtProduct("netactivity")
        let result = try run(
            netactivity, ["shell-init", "zsh"],
            environment: ["NETACTIVITY_SHELL_COMMANDS": "defaults, yt-dlp=download, rclone sync=fast, a b c, it's"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout.contains("'yt-dlp') __netactivity_found=download"), "\(result.stdout)")
        #expect(result.stdout.contains("'curl') __netactivity_found=download"))
        #expect(!result.stdout.contains("rclone"))
        let problems = result.stderr.split(separator: "\n")
        #expect(problems.count == 3, "\(result.stderr)")
    }

    /// The helper as fish runs it: lines through a FIFO, gone with the process it watches.
    @Test func theHelperReadsItsLinesAndLeavesWithItsShell() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let shell = try ChildProcess("sleep", ["60"])
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("netactivity-fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let helper = try service.startNetactivity(["shell-helper", "--shell-pid", String(shell.pid), "--fifo", fifo])
        let writer = open(fifo, O_WRONLY)
        #expect(writer >= 0)
        defer { close(writer) }
        func send(_ text: String) {
            var text = text
            text.withUTF8 { _ = write(writer, $0.baseAddress, $0.count) }
        }

        send("begin download " + String(repeating: "x", count: 100_000) + "\n")
        try waitUntil("the long label, cut") { try probe.activities().map(\.label) == [String(repeating: "x", count: 256)] }
        send("nonsense\nbegin - \u{1B}[31mred\u{01}\n")
        try waitUntil("the second begin to replace the first") { try probe.activities().map(\.label) == [" [31mred "] }
        #expect(try kind(of: try #require(try probe.activities().first), on: service) == "other")
        send("end\n")
        try waitUntil("the end") { try probe.count() == 0 }
        send("begin sync again\n")
        try waitUntil("another activity") { try probe.count() == 1 }

        shell.send(signal: SIGKILL)
        let result = try helper.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        try waitUntil("the activity to end with the helper") { try probe.count() == 0 }
        #expect(!FileManager.default.fileExists(atPath: fifo))
    }

    /// The helper as bash and zsh run it: lines on standard input, gone at its end.
    @Test func theHelperLeavesAtTheEndOfItsInput() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let result = try run(
            try builtProduct("netactivity"), ["--address", service.address, "shell-helper"],
            input: "begin upload scp a host:\n")
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(try probe.count() == 0)
    }
}

/// The activity's `Kind` hint, as the service shows it on its object.
private func kind(of activity: ActivityInfo, on service: ServiceDaemon) throws -> String {
    let result = try service.busctl(
        ["get-property", NetActivityBus.name.rawValue, "\(NetActivityBus.path.rawValue)/activity/\(activity.id)",
         "\(NetActivityBus.interface.rawValue).Activity", "Kind"])
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "s ", with: "")
        .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
}

/// The process tracing `pid`, 0 for none.
private func tracerPID(of pid: Int32) throws -> Int32 {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    let line = status.split(separator: "\n").first { $0.hasPrefix("TracerPid:") } ?? ""
    return Int32(line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces)) ?? 0
}
