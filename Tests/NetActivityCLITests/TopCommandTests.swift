@testable import NetActivityCLI
import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import NetActivityTray
import Testing

/// Begins an activity with a kind hint, as a reporting client does.
private func begin(_ client: ServiceProbe, _ label: String, kind: String) throws -> UInt32 {
    let hints = Value.dictionary(key: "s", value: "v", [(.string(NetActivityBus.Hint.kind), .variant(.string(kind)))])
    let reply = try client.call(NetActivityBus.Member.beginActivityWithHints, [.string(label), hints])
    return try #require(reply.first?.uint32)
}

private func update(_ client: ServiceProbe, _ id: UInt32, _ completed: UInt64, of total: UInt64) throws {
    try client.call("UpdateActivity", [.uint32(id), .uint64(completed), .uint64(total)])
}

/// `netactivity top --once`: one frame of a real service's state, into a pipe.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TopOnceTests {
    @Test func printsTheActivitiesClientsBeganTheBusiestFirst() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        // Two byte updates each give a rate: the second activity moves far more bytes.
        let slow = try begin(client, "slow sync", kind: "sync")
        _ = try begin(client, "\u{1B}]2;owned\u{07}\u{1B}[2Jhostile", kind: "other")
        try update(client, slow, 0, of: 10_000_000)
        try update(client, slow, 1_000, of: 10_000_000)
        let fast = try begin(client, "fast download", kind: "download")
        try update(client, fast, 0, of: 10_000_000)
        try update(client, fast, 5_000_000, of: 10_000_000)
        try waitUntil("the rates") { try client.activities().count == 3 && (try client.property("Rate").double ?? 0) > 0 }

        let result = try run(
            try builtProduct("netactivity"), ["--address", service.address, "top", "--once"],
            environment: ["COLUMNS": "100"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let lines = result.stdout.components(separatedBy: "\n")
        #expect(lines.last == "", "ends with a line end: \(result.stdout)")
        #expect(lines[0].hasPrefix("Network activity: 3 — 25% — "), "\(lines[0])")
        #expect(lines[1].hasPrefix("last minute ") && lines[1].contains("█ peak "), "\(lines[1])")
        let heading = try #require(lines.firstIndex { $0.hasPrefix("ACTIVITY ") }, "\(lines)")
        #expect(lines[heading].split(separator: " ") == ["ACTIVITY", "KIND", "RATE", "MOVED", "DONE", "LEFT"])
        let rows = lines[(heading + 1)...].filter { !$0.isEmpty }
        #expect(rows.count == 3, "\(lines)")
        #expect(rows.first?.contains("fast download") == true && rows.first?.contains("download") == true, "\(rows)")
        #expect(rows.first?.contains(" 50%") == true && rows.first?.contains("5.0 MB") == true, "\(rows)")
        #expect(rows.dropFirst().first?.contains("slow sync") == true && rows.dropFirst().first?.contains(" sync ") == true, "\(rows)")
        #expect(rows.dropFirst().first?.contains(" 0%") == true, "\(rows)")
        #expect(rows.last?.contains("?]2;owned??[2Jhostile") == true, "\(rows)")
        for line in lines { #expect(line.count <= 100, "\(line)") }
        #expect(!result.stdout.contains("\u{1B}"), "no escape sequences into a pipe")
    }

    @Test func anIdleServiceIsOneShortFrame() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["top", "--once"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout == "No network activity\nlast minute\n", "\(result)")
    }

    @Test func noServiceFailsAsStatusDoes() throws {
        let bus = try PrivateBus()
        let result = try run(try builtProduct("netactivity"), ["--address", bus.address, "top", "--once"])
        #expect(result.exitStatus == 1, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("is not running"), "\(result)")
    }

    @Test func followingNeedsATerminal() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["top"])
        #expect(result.exitStatus == 1, "\(result)")
        #expect(result.stderr == "netactivity: top: standard output is not a terminal (top --once prints one frame)\n")
    }
}

/// `netactivity top` in a real terminal (tmux): it follows the service, redraws, fits the
/// terminal as it is resized, sleeps while idle, and gives the terminal back however it ends.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TopTerminalTests {
    /// Starts `top` in `terminal` on `service`'s bus, recording the terminal's settings before
    /// and after it (`alone`: top is a command line of its own, as bash goes on with the rest of
    /// a line when its job stops, and the caller types `recordExit` after it), and waits for its
    /// first frame.
    private func startTop(
        in terminal: TopTerminal, on service: ServiceDaemon, system: ServiceDaemon? = nil, alone: Bool = false,
        firstLine: String = "No network activity"
    ) throws {
        let netactivity = try builtProduct("netactivity")
        let systemSide = system.map { " --system-address '\($0.address)'" } ?? ""
        let top = "'\(netactivity)' --address '\(service.address)'\(systemSide) top"
        try terminal.type("stty -a > before; " + top + (alone ? "" : "; " + recordExit))
        try terminal.waitForScreen("the first frame") { $0.first == firstLine }
        #expect(try terminal.format("#{alternate_on}") == "1", "top draws on the alternate screen")
        #expect(try terminal.format("#{cursor_flag}") == "0", "and hides the cursor")
    }

    private let recordExit = "echo \"top exited $?\"; stty -a > after; echo settings saved"

    /// After `top` ended: the shell's screen is back with what it showed, the cursor shows, and
    /// the terminal's settings are what they were.
    private func expectRestored(_ terminal: TopTerminal, status: Int = 0) throws {
        try terminal.waitForScreen("top to exit and the settings saved") { $0.contains("settings saved") }
        let lines = terminal.lines()
        #expect(lines.contains("top exited \(status)"), "\(lines)")
        #expect(terminal.history().contains("stty -a > before; "), "the main screen, with the command typed: \(lines)")
        #expect(!lines.contains("No network activity"), "the alternate screen is gone: \(lines)")
        #expect(try terminal.format("#{alternate_on}") == "0")
        #expect(try terminal.format("#{cursor_flag}") == "1")
        let before = try String(contentsOfFile: terminal.directory + "/before", encoding: .utf8)
        let after = try String(contentsOfFile: terminal.directory + "/after", encoding: .utf8)
        // The first line has the size, which a test may have changed meanwhile.
        func settings(_ text: String) -> String { text.split(separator: "\n").dropFirst().joined(separator: "\n") }
        #expect(settings(before) == settings(after), "stty -a before and after")
        #expect(after.contains(" icanon") && after.contains(" echo "), "\(after)")
    }

    @Test func followsBothBusesRedrawsResizesAndQuitsWithQ() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let system = try ServiceDaemon()
        let systemClient = try system.probe()
        let terminal = try TopTerminal(columns: 100, rows: 30)
        defer { terminal.close() }
        try startTop(in: terminal, on: service, system: system)
        let top = try #require(terminal.children().first, "top runs in the shell")

        // An activity begun after top started shows; its progress redraws the row.
        let id = try begin(client, "tmux download", kind: "download")
        try update(client, id, 0, of: 4_000_000)
        try terminal.waitForScreen("the activity's row") { lines in
            lines.first == "Network activity: 1 — 0%"
                && lines.contains { $0.contains("tmux download") && $0.contains("download") && $0.hasSuffix("0%") }
        }
        let heading = try #require(terminal.lines().first { $0.hasPrefix("ACTIVITY") })
        #expect(heading.split(separator: " ") == ["ACTIVITY", "KIND", "RATE", "MOVED", "DONE", "LEFT"], "\(heading)")
        try update(client, id, 2_000_000, of: 4_000_000)
        try terminal.waitForScreen("50 %, with a rate and a time left") { lines in
            lines.contains { $0.contains("tmux download") && $0.contains("2.0 MB") && $0.contains(" 50%") && $0.contains("/s") }
        }

        // The system side's activities are listed too, titled as every panel titles them.
        let update = try begin(systemClient, "system update", kind: "update")
        try terminal.waitForScreen("the system side's row") { lines in
            lines.first?.hasPrefix("Network activity: 2 — ") == true
                && lines.contains { $0.hasPrefix("system: ") && $0.contains("system update") && $0.contains(" update ") }
        }
        try systemClient.call("EndActivity", [.uint32(update)])
        try terminal.waitForScreen("the system side's row gone") { lines in !lines.contains { $0.hasPrefix("system: ") } }

        // Narrower: the kind and the bytes moved make room for the title.
        try terminal.resize(columns: 50, rows: 12)
        try terminal.waitForScreen("the 50-column layout") { lines in
            lines.contains { $0.hasPrefix("ACTIVITY") && !$0.contains("KIND") && !$0.contains("MOVED") }
        }
        for line in terminal.lines() { #expect(line.count <= 50, "\(line)") }

        // Ended: the idle frame, and then no wake-ups again.
        try client.call("EndActivity", [.uint32(id)])
        try terminal.waitForScreen("idle again") { $0.first == "No network activity" }
        // (Long after the merged view's one-off wait for its slower side's first state.)
        #expect(try wakeUps(of: top, over: 1.0) == [], "idle: no tick left, no wake-ups at all")

        try terminal.press("q")
        try expectRestored(terminal)
    }

    @Test(arguments: ["C-c", "SIGTERM", "SIGHUP"])
    func givesTheTerminalBackHoweverItEnds(_ ending: String) throws {
        let service = try ServiceDaemon()
        let terminal = try TopTerminal()
        defer { terminal.close() }
        try startTop(in: terminal, on: service)
        if ending.hasPrefix("SIG") {
            let top = try #require(terminal.children().first, "top runs in the shell")
            kill(top, ending == "SIGTERM" ? SIGTERM : SIGHUP)
        } else {
            try terminal.press(ending)
        }
        try expectRestored(terminal)
    }

    @Test func hostileLabelsNeverReachTheTerminal() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        _ = try begin(client, "\u{1B}]2;owned\u{07}\u{1B}[2J\u{1B}[1;1Hevil \u{202E}txt.exe", kind: "download")
        let terminal = try TopTerminal()
        defer { terminal.close() }
        let title = try terminal.format("#{pane_title}")
        try startTop(in: terminal, on: service, firstLine: "Network activity: 1")
        try terminal.waitForScreen("the activity's row") { lines in
            // Control characters as "?", the right-to-left override left out.
            lines.contains { $0.contains("?]2;owned??[2J?[1;1Hevil txt.exe") }
        }
        #expect(try terminal.format("#{pane_title}") == title, "no label retitles the terminal")
        let lines = terminal.lines()
        #expect(lines[0] == "Network activity: 1" && lines[3].hasPrefix("ACTIVITY"), "nothing moved or cleared: \(lines)")
        try terminal.press("q")
        try expectRestored(terminal)
    }

    /// A terminal of `script`'s, no tmux between: the bytes top writes are the alternate screen,
    /// its frames, and the way back.
    @Test func aPlainTerminalGetsTheAlternateScreenAndBackAgain() throws {
        try requireTool("script")
        let service = try ServiceDaemon()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("netactivity-top-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keys = directory + "/keys"
        #expect(mkfifo(keys, 0o600) == 0)
        let top = "stty cols 60 rows 10; '\(try builtProduct("netactivity"))' --address '\(service.address)' top"
        // Held open read-write, so the keys' FIFO never reads as ended between the test's writes.
        let terminal = try ChildProcess(
            "bash", ["-c", "exec 3<>\"$1\"; exec script -q -e -c \"$2\" /dev/null <&3", "script", keys, top])
        try waitUntil("the first frame: \(terminal.stdoutText)") { terminal.stdoutText.contains("No network activity") }
        let writer = try #require(FileHandle(forWritingAtPath: keys))
        writer.write(Data("q".utf8))
        try writer.close()
        let result = try terminal.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        let output = result.stdout
        #expect(output.hasPrefix("\u{1B}[?1049h\u{1B}[?25l\u{1B}[1;1HNo network activity\u{1B}[K"), "\(output.debugDescription)")
        #expect(output.hasSuffix("\u{1B}[?25h\u{1B}[?1049l"), "\(output.debugDescription)")
    }

    @Test func onceInATerminalFitsAboveThePrompt() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for index in 1...20 { _ = try begin(client, "transfer \(index)", kind: "download") }
        let terminal = try TopTerminal(columns: 60, rows: 10)
        defer { terminal.close() }
        let netactivity = try builtProduct("netactivity")
        try terminal.type("clear; '\(netactivity)' --address '\(service.address)' top --once")
        try terminal.waitForScreen("the frame and the prompt") { lines in
            lines.first == "Network activity: 20" && lines.last { !$0.isEmpty } == "$"
        }
        let lines = terminal.lines()
        // Nine lines of frame (summary, sparkline, blank, headings, 4 rows, "… and 16 more"), then the prompt.
        #expect(lines[8] == "… and 16 more", "\(lines)")
        #expect(lines[9] == "$", "\(lines)")
    }

    @Test func ctrlZGivesTheTerminalBackUntilFg() throws {
        let service = try ServiceDaemon()
        let terminal = try TopTerminal()
        defer { terminal.close() }
        try startTop(in: terminal, on: service, alone: true)
        try terminal.press("C-z")
        try terminal.waitForScreen("the shell's job stopped") { lines in lines.contains { $0.contains("Stopped") } }
        #expect(try terminal.format("#{alternate_on}") == "0")
        #expect(try terminal.format("#{cursor_flag}") == "1")
        try terminal.type("fg")
        try terminal.waitForScreen("top again") { $0.first == "No network activity" }
        #expect(try terminal.format("#{alternate_on}") == "1")
        try terminal.press("q")
        try terminal.waitForScreen("the prompt") { lines in lines.last { !$0.isEmpty } == "$" }
        try terminal.type(recordExit)
        try expectRestored(terminal)
    }
}

/// `top`'s command line.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TopInvocationTests {
    @Test func parsesTopAndOnce() throws {
        #expect(try Invocation.parse(["top"]).command == .top(once: false))
        #expect(try Invocation.parse(["top", "--once"]).command == .top(once: true))
        let followed = try Invocation.parse(["top", "--session-only", "--address", "unix:path=/tmp/x"])
        #expect(followed.services == FollowedServices(session: .address("unix:path=/tmp/x"), system: nil))
        #expect(throws: Invocation.UsageError.self) { try Invocation.parse(["top", "--twice"]) }
        #expect(try Invocation.parse(["top", "--help"]).command == .help(topic: "top"))
    }
}
