import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchReader {
    /// Reads lines until one satisfies `condition`, failing once `deadline` has passed: for
    /// "within 1 s" as a wait with a deadline, not a sleep.
    @discardableResult
    mutating func next(
        _ what: String, before deadline: ContinuousClock.Instant, _ condition: (String) throws -> Bool
    ) throws -> String {
        while true {
            let left = deadline - .now
            let line: String
            do {
                guard left > .zero else { throw BusTestError("deadline passed") }
                line = try next(timeout: left)
            } catch {
                throw BusTestError("no line with \(what) in time (\(error)); lines so far: \(seen)")
            }
            if try condition(line) { return line }
        }
    }
}

/// One `watch --format json` line, read for what the merge tests look at.
struct MergedLine {
    var count: Int
    var active: Bool
    var service: Bool
    /// (bus, label) of every activity, in order.
    var activities: [(bus: String, label: String)]

    init(_ line: String) throws {
        let object = try jsonObject(line)
        count = (object["count"] as? NSNumber)?.intValue ?? -1
        active = object["active"] as? Bool ?? false
        service = object["service"] as? Bool ?? false
        activities = (object["activities"] as? [[String: Any]] ?? []).map {
            ($0["bus"] as? String ?? "?", $0["label"] as? String ?? "?")
        }
    }

    func lists(_ bus: String, _ label: String) -> Bool {
        activities.contains { $0.bus == bus && $0.label == label }
    }
}

/// How long "within 1 s" may take here: the second, plus a little slack for a loaded machine.
let withinOneSecond: Duration = .milliseconds(1_300)

// MARK: - Tests

/// `watch`, `status` following the session and the system service as one indicator.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLIBothBusesTests {
    @Test func watchShowsTheUnionAndEitherSideAloneWhileTheOtherIsGone() throws {
        let both = try TwoServices()
        let sessionProbe = try both.session.probe()
        var watch = WatchReader(try both.startNetactivity(["watch", "--format", "json"]))
        let first = try MergedLine(try watch.next())
        #expect(first.service && !first.active && first.count == 0, "\(watch.seen)")

        // The union: counts summed, the system's activity marked.
        try sessionProbe.call("Push")
        var systemProbe = try both.system.probe()
        _ = try systemProbe.begin("apt upgrade")
        try watch.next("the union (count 2, the system's activity)") { line in
            let state = try MergedLine(line)
            return state.count == 2 && state.lists("system", "apt upgrade") && state.activities.count == 1
        }

        // The system service killed: the session's state alone, within 1 s.
        var killed = ContinuousClock.now
        try both.system.stop(signal: SIGKILL)
        try watch.next("the session's state alone", before: killed + withinOneSecond) { line in
            let state = try MergedLine(line)
            return state.count == 1 && state.active && state.activities.isEmpty
        }

        // Restarted: the union again.
        try both.system.start()
        systemProbe = try both.system.probe()
        _ = try systemProbe.begin("firmware")
        try watch.next("the union after the system service's restart") { line in
            let state = try MergedLine(line)
            return state.count == 2 && state.lists("system", "firmware")
        }

        // The session service killed: the system's state alone, within 1 s.
        killed = .now
        try both.session.stop(signal: SIGKILL)
        try watch.next("the system's state alone", before: killed + withinOneSecond) { line in
            let state = try MergedLine(line)
            return state.count == 1 && state.service && state.lists("system", "firmware")
        }

        // Restarted: the union again, with the session's new activity listed first.
        try both.session.start()
        let restartedProbe = try both.session.probe()
        _ = try restartedProbe.begin("sync")
        let union = try watch.next("the union after the session service's restart") { line in
            let state = try MergedLine(line)
            return state.count == 2 && state.lists("session", "sync") && state.lists("system", "firmware")
        }
        #expect(try MergedLine(union).activities.map(\.bus) == ["session", "system"], "\(watch.seen)")

        // Both gone: idle, service unavailable; watch keeps going.
        try both.session.stop(signal: SIGKILL)
        try both.system.stop(signal: SIGKILL)
        try watch.next("the unavailable state") { try !MergedLine($0).service }
        #expect(watch.process.isRunning)
        #expect(watch.process.stderrText.isEmpty, "\(watch.process.stderrText)")
    }

    @Test func statusPrintsBoth() throws {
        let both = try TwoServices()
        let sessionProbe = try both.session.probe()
        let systemProbe = try both.system.probe()
        try sessionProbe.call("Push")
        _ = try systemProbe.begin("apt upgrade")
        _ = try sessionProbe.begin("sync")

        let text = try both.session.netactivity(["status", "--system-address", both.system.address])
        #expect(text.exitStatus == 0 && text.stderr.isEmpty, "\(text)")
        #expect(text.stdout.contains("Count:      3"), "\(text)")
        let lines = text.stdout.split(separator: "\n")
        let session = try #require(lines.firstIndex { $0.contains(" sync ") }, "\(text)")
        let system = try #require(lines.firstIndex { $0.contains(" system: ") && $0.contains("apt upgrade") }, "\(text)")
        #expect(session < system, "the session's first: \(text)")

        let json = try both.session.netactivity(["status", "--json", "--system-address", both.system.address])
        #expect(json.exitStatus == 0, "\(json)")
        let state = try MergedLine(json.stdout.trimmingCharacters(in: .newlines))
        #expect(state.count == 3 && state.lists("system", "apt upgrade") && state.lists("session", "sync"), "\(json)")
    }

    @Test func theDefaultIsBothAndSessionOnlyLeavesOutTheSystem() throws {
        let both = try TwoServices()
        let sessionProbe = try both.session.probe()
        let systemProbe = try both.system.probe()
        try sessionProbe.call("Push")
        _ = try systemProbe.begin("apt upgrade")

        let merged = try both.netactivityAsOnADesktop(["status", "--json"])
        #expect(merged.exitStatus == 0, "\(merged)")
        let mergedState = try MergedLine(merged.stdout.trimmingCharacters(in: .newlines))
        #expect(mergedState.count == 2 && mergedState.lists("system", "apt upgrade"), "\(merged)")

        for arguments in [["--session-only", "status", "--json"], ["status", "--json", "--session-only"]] {
            let sessionOnly = try both.netactivityAsOnADesktop(arguments)
            #expect(sessionOnly.exitStatus == 0, "\(sessionOnly)")
            let state = try MergedLine(sessionOnly.stdout.trimmingCharacters(in: .newlines))
            #expect(state.count == 1 && state.activities.isEmpty, "\(arguments): \(sessionOnly)")
        }

        let watch = try ChildProcess(
            try builtProduct("netactivity"), ["watch", "--format", "json", "--session-only"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": both.session.address, "DBUS_SYSTEM_BUS_ADDRESS": both.system.address])
        var reader = WatchReader(watch)
        let first = try MergedLine(try reader.next())
        #expect(first.count == 1 && first.activities.isEmpty, "\(reader.seen)")
        _ = try systemProbe.begin("firmware")
        try sessionProbe.call("Pop")
        try reader.next("the session's pop") { try MergedLine($0).count == 0 }
        #expect(reader.seen.allSatisfy { (try? MergedLine($0).activities.isEmpty) == true }, "\(reader.seen)")
    }

    @Test func theSystemServiceAloneWithSystem() throws {
        let both = try TwoServices()
        try both.session.probe().call("Push")
        let systemProbe = try both.system.probe()
        _ = try systemProbe.begin("apt upgrade")
        let result = try run(
            try builtProduct("netactivity"), ["status", "--json", "--system", "--system-address", both.system.address])
        #expect(result.exitStatus == 0, "\(result)")
        let state = try MergedLine(result.stdout.trimmingCharacters(in: .newlines))
        #expect(state.count == 1 && state.lists("system", "apt upgrade"), "\(result)")
    }
}

/// A system side that is not there (no system bus, as in most containers) only means no
/// system entries.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLIMissingSystemBusTests {
    static let noBus = "unix:path=/nonexistent/netactivity-test/system_bus_socket"

    @Test func watchShowsTheSessionWithAtMostOneLineOnStderr() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        var watch = WatchReader(try service.startNetactivity(["watch", "--format", "json", "--system-address", Self.noBus]))
        let first = try MergedLine(try watch.next())
        #expect(first.service && first.count == 0, "\(watch.seen)")
        try probe.call("Push")
        try watch.next("count 1") { try MergedLine($0).count == 1 }
        try probe.call("Pop")
        try watch.next("count 0") { try MergedLine($0).count == 0 }
        #expect(watch.process.isRunning)
        let stderr = watch.process.stderrText
        #expect(stderr.filter { $0 == "\n" }.count <= 1, "\(stderr)")
        #expect(stderr.isEmpty || stderr.hasPrefix("netactivity: system side: "), "\(stderr)")
    }

    @Test func statusShowsTheSessionSilently() throws {
        let service = try ServiceDaemon()
        try service.probe().call("Push")
        let result = try service.netactivity(["status", "--system-address", Self.noBus])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.contains("Count:      1"), "\(result)")
    }

    @Test func statusFailsOnlyWhenNeitherSideAnswers() throws {
        let session = try ServiceDaemon(startService: false)
        let system = try ServiceDaemon(ServiceDaemon.immediate + ["--system"])
        _ = try system.probe().call("Push")
        let systemOnly = try session.netactivity(["status", "--json", "--system-address", system.address])
        #expect(systemOnly.exitStatus == 0, "\(systemOnly)")
        #expect(try MergedLine(systemOnly.stdout.trimmingCharacters(in: .newlines)).count == 1, "\(systemOnly)")
        #expect(systemOnly.stderr.contains("not running"), "the session's absence is one line: \(systemOnly)")

        let neither = try session.netactivity(["status", "--system-address", Self.noBus])
        #expect(neither.exitStatus == 1, "\(neither)")
        #expect(neither.stderr.filter { $0 == "\n" }.count == 1, "\(neither)")
    }
}
