import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

/// Reads a `watch` process's stdout line by line, as a panel reading a pipe does.
struct WatchReader {
    let process: ChildProcess
    /// Every line read so far, in order.
    private(set) var seen: [String] = []

    init(_ process: ChildProcess) {
        self.process = process
    }

    /// The next line.
    mutating func next(timeout: Duration = .seconds(10)) throws -> String {
        guard let line = try process.readLine(timeout: timeout) else {
            throw BusTestError("watch closed its output; lines so far: \(seen)\n\(process.stderrText)")
        }
        seen.append(line)
        return line
    }

    /// Reads lines until one satisfies `condition` and returns it; the lines skipped on the way
    /// (intermediate states, e.g. Active before Visible) stay in `seen`.
    @discardableResult
    mutating func next(
        _ what: String, within limit: Int = 5, timeout: Duration = .seconds(10), _ condition: (String) throws -> Bool
    ) throws -> String {
        for _ in 0..<limit {
            let line = try next(timeout: timeout)
            if try condition(line) { return line }
        }
        throw BusTestError("no line with \(what) within \(limit) lines: \(seen)")
    }
}

/// Parses one line of JSON output into an object.
func jsonObject(_ line: String) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
        throw BusTestError("not a JSON object: \(line)")
    }
    return object
}

/// `netactivity watch`: one line per change, current state first, in three formats.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLIWatchTests {
    /// A panel that exits while nothing changes (waybar on SIGTERM): `watch` leaves with
    /// status 0 within a second, without waiting for a next line to fail on.
    @Test func watchLeavesWhenItsReaderExits() throws {
        let service = try ServiceDaemon()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The reader takes one line, notes the time and exits; watch's stdout is then a pipe
        // with no reader. The time is written before the reader closes its end.
        let script = """
            "$0" --address "$1" watch > >(read -r line; echo "line $line"; date +%s%N > "$2") &
            watcher=$!
            echo "pid $watcher"
            wait "$watcher"; status=$?
            end=$(date +%s%N)
            echo "status $status after $(( (end - $(cat "$2")) / 1000000 )) ms"
            """
        let shell = try ChildProcess(
            "bash", ["-c", script, try builtProduct("netactivity"), service.address, directory + "/reader-left"])
        var watcherPID: pid_t?
        defer { if let watcherPID, shell.isRunning { kill(watcherPID, SIGKILL) } }
        var seen: [String] = []
        while let line = try shell.readLine(timeout: .seconds(10)) {
            seen.append(line)
            if line.hasPrefix("pid ") { watcherPID = pid_t(line.dropFirst(4)) }
            if line.hasPrefix("status ") { break }
        }
        #expect(seen.contains("line idle"), "the reader got the first state: \(seen)")
        let summary = try #require(seen.last { $0.hasPrefix("status ") }, "watch did not exit: \(seen)")
        let parts = summary.split(separator: " ")
        #expect(parts.count == 5 && parts[1] == "0", "exit status 0: \(summary)")
        let milliseconds = try #require(parts.count == 5 ? Int(parts[3]) : nil, "\(summary)")
        #expect(milliseconds < 1000, "left \(milliseconds) ms after its reader")
        _ = try shell.waitForExit(timeout: .seconds(10))
    }

    @Test func plainLinesFollowEveryChange() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        var watch = WatchReader(try service.startNetactivity(["watch"]))

        #expect(try watch.next() == "idle")
        try probe.call("Push")
        try watch.next("active: 1") { $0 == "active: 1" }
        try probe.call("Push")
        #expect(try watch.next() == "active: 2")
        try probe.call("Pop")
        #expect(try watch.next() == "active: 1")
        try probe.call("Pop")
        try watch.next("idle") { $0 == "idle" }
        #expect(
            watch.seen.allSatisfy { ["idle", "active: 1", "active: 2", "active: 1 (not yet shown)"].contains($0) },
            "\(watch.seen)")
        #expect(zip(watch.seen, watch.seen.dropFirst()).allSatisfy { $0 != $1 }, "no repeated lines: \(watch.seen)")
    }

    @Test func theFirstLineIsTheCurrentState() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        try probe.call("Push")
        let id = try probe.begin("already busy")
        try probe.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(4)])
        try waitUntil("Visible") { try probe.property("Visible").bool == true }

        var watch = WatchReader(try service.startNetactivity(["watch"]))
        #expect(try watch.next() == "active: 2 25%")
    }

    @Test func visibleLagsBehindActiveWithAnActivationDelay() throws {
        let service = try ServiceDaemon(["--throttle-ms", "0", "--activation-delay", "0.3", "--completion-delay", "0"])
        let probe = try service.probe()
        var watch = WatchReader(try service.startNetactivity(["watch"]))
        #expect(try watch.next() == "idle")
        try probe.call("Push")
        #expect(try watch.next() == "active: 1 (not yet shown)")
        #expect(try watch.next() == "active: 1")
        try probe.call("Pop")
        #expect(try watch.next() == "idle")
    }

    @Test func jsonLinesAreWholeStates() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        var watch = WatchReader(try service.startNetactivity(["watch", "--format", "json"]))

        let first = try jsonObject(try watch.next())
        #expect(Set(first.keys) == ["active", "visible", "count", "progress", "rate", "remaining_seconds", "activities", "service"])
        #expect(first["active"] as? Bool == false)
        #expect((first["count"] as? NSNumber)?.intValue == 0)
        #expect(first["progress"] is NSNull)
        #expect(first["service"] as? Bool == true)

        let id = try probe.begin("json watch")
        try watch.next("the activity") { line in
            let object = try jsonObject(line)
            return (object["activities"] as? [[String: Any]])?.first?["label"] as? String == "json watch"
        }
        try probe.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])
        try watch.next("progress 0.5") { try (jsonObject($0)["progress"] as? NSNumber)?.doubleValue == 0.5 }
        try probe.call("EndActivity", [.uint32(id)])
        try watch.next("count 0") { line in
            let object = try jsonObject(line)
            return (object["count"] as? NSNumber)?.intValue == 0 && object["active"] as? Bool == false
        }
        for line in watch.seen { _ = try jsonObject(line) }
    }

    @Test func waybarLinesForPanels() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        var watch = WatchReader(try service.startNetactivity(["watch", "-f", "waybar"]))

        let idle = try jsonObject(try watch.next())
        #expect(Set(idle.keys) == ["text", "tooltip", "class"], "no percentage without progress: \(idle)")
        #expect(idle["class"] as? String == "idle")
        #expect(idle["text"] as? String == "")
        #expect(idle["tooltip"] as? String == "No network activity")

        try probe.call("Push")
        let active = try jsonObject(try watch.next("class active") { try jsonObject($0)["class"] as? String == "active" })
        #expect(active["text"] as? String == "⇅ 1")
        #expect(active["percentage"] == nil)

        let id = try probe.begin("Update packages")
        try probe.call("UpdateActivity", [.uint32(id), .uint64(50), .uint64(100)])
        // The overall Progress and the activity's own progress arrive in separate signals
        // (contract version 2): wait for the line that has both.
        let progress = try jsonObject(try watch.next("a percentage and the activity's progress") {
            let line = try jsonObject($0)
            return line["percentage"] != nil && (line["tooltip"] as? String)?.contains("Update packages — 50%") == true
        })
        #expect((progress["percentage"] as? NSNumber)?.intValue == 50)
        #expect(progress["class"] as? String == "active")
        #expect(progress["text"] as? String == "⇅ 2 50%")
        let tooltip = try #require(progress["tooltip"] as? String)
        #expect(tooltip.contains("Update packages — 50%"), "\(tooltip)")
        #expect(progress["alt"] as? String == "other", "the busiest transfer's kind")

        try probe.call("EndActivity", [.uint32(id)])
        try probe.call("Pop")
        let back = try jsonObject(try watch.next("class idle") { try jsonObject($0)["class"] as? String == "idle" })
        #expect(back["percentage"] == nil)
        for line in watch.seen { _ = try jsonObject(line) }
    }

    @Test func watchSurvivesAServiceRestart() throws {
        let service = try ServiceDaemon()
        var watch = WatchReader(try service.startNetactivity(["watch"]))
        #expect(try watch.next() == "idle")
        try service.probe().call("Push")
        try watch.next("active: 1") { $0 == "active: 1" }

        try service.stop(signal: SIGTERM)
        #expect(try watch.next() == "idle (service unavailable)")

        try service.start()
        #expect(try watch.next() == "idle", "the new service's state")
        let probe = try service.probe()
        try probe.call("Push")
        try watch.next("active: 1 from the new service") { $0 == "active: 1" }
        try probe.call("Pop")
        try watch.next("idle again") { $0 == "idle" }
        #expect(watch.process.isRunning)
        #expect(lines(watch.process.stderrText).count <= 1, "at most one line per outage: \(watch.process.stderrText)")
    }

    @Test func waybarShowsIdleWhileTheServiceIsGone() throws {
        let service = try ServiceDaemon()
        var watch = WatchReader(try service.startNetactivity(["watch", "--format=waybar"]))
        #expect(try jsonObject(try watch.next())["class"] as? String == "idle")
        try service.stop(signal: SIGKILL)
        let gone = try jsonObject(try watch.next())
        #expect(gone["class"] as? String == "idle")
        #expect(gone["tooltip"] as? String == "Network activity service unavailable")
        try service.start()
        try service.probe().call("Push")
        try watch.next("class active") { try jsonObject($0)["class"] as? String == "active" }
    }

    @Test func watchWithoutAServiceStartsIdleAndPicksItUpLater() throws {
        let service = try ServiceDaemon(startService: false)
        var watch = WatchReader(try service.startNetactivity(["watch"]))
        #expect(try watch.next() == "idle (service unavailable)")
        try service.start()
        #expect(try watch.next() == "idle")
        try service.probe().call("Push")
        try watch.next("active: 1") { $0 == "active: 1" }
    }
}
