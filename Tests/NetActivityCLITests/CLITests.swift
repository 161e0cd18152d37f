import BusTestSupport
@testable import NetActivityCLI
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

/// The lines of a command's output, without the final newline's empty tail.
func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
}

/// Checks that `result` failed with `status` and exactly one `netactivity: …` line on stderr,
/// nothing on stdout and nothing that looks like a crash.
func expectOneLineFailure(
    _ result: ProcessResult, status: Int32, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.exitStatus == status, "\(result)", sourceLocation: sourceLocation)
    #expect(lines(result.stderr).count == 1, "one line on stderr: \(result)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("netactivity: "), "\(result)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasSuffix("\n"), "\(result)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
    for crash in ["Fatal error", "Stack dump", "backtrace", "Current stack trace", "0x0000"] {
        #expect(!result.stderr.contains(crash), "no crash output: \(result)", sourceLocation: sourceLocation)
    }
}

/// The `netactivity` binary run without a bus: help, version and usage errors.
func netactivity(_ arguments: [String]) throws -> ProcessResult {
    try run(try builtProduct("netactivity"), arguments, timeout: .seconds(30))
}

/// `status`, `push`, `pop`, help and usage errors of the `netactivity` command line.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLITests {
    // MARK: - status

    @Test func statusOfAnIdleService() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["status"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        #expect(lines(result.stdout) == [
            "Active:     no",
            "Visible:    no",
            "Count:      0",
            "Progress:   unknown",
            "Activities: none",
        ])
    }

    @Test func statusListsCountProgressAndActivities() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        try probe.call("Push")
        let id = try probe.begin("Mirror ISO")
        try probe.call("UpdateActivity", [.uint32(id), .uint64(1024), .uint64(4096)])
        try waitUntil("Visible to follow Active") { try probe.property("Visible").bool == true }

        let result = try service.netactivity(["status"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty)
        let output = lines(result.stdout)
        #expect(Array(output.prefix(5)) == [
            "Active:     yes",
            "Visible:    yes",
            "Count:      2",
            "Progress:   25%",
            "Activities:",
        ])
        let activityLine = try #require(output.dropFirst(5).first)
        // Attributed as `watch` shows it: the application, then the owner and its process.
        let application = try #require(try attribution(of: id, on: service).application)
        #expect(!application.isEmpty)
        #expect(activityLine.hasPrefix("  #\(id) \(application) — Mirror ISO"), "\(activityLine)")
        // SI units, as GNOME shows sizes: 1,024 of 4,096 bytes.
        #expect(activityLine.contains("1.0 kB of 4.1 kB (25%)"), "\(activityLine)")
        #expect(activityLine.contains("by \(probe.uniqueName) (pid \(getpid()))"), "\(activityLine)")
        #expect(output.count == 6)
    }

    @Test func statusJSONHasTheStableKeys() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()

        let idle = try service.netactivity(["status", "--json"])
        #expect(idle.exitStatus == 0, "\(idle)")
        #expect(lines(idle.stdout).count == 1)
        let idleObject = try #require(try JSONSerialization.jsonObject(with: Data(idle.stdout.utf8)) as? [String: Any])
        #expect(Set(idleObject.keys) == ["active", "visible", "count", "progress", "rate", "remaining_seconds", "activities", "service"])
        #expect(idleObject["remaining_seconds"] is NSNull)
        #expect(idleObject["active"] as? Bool == false)
        #expect(idleObject["visible"] as? Bool == false)
        #expect((idleObject["count"] as? NSNumber)?.intValue == 0)
        #expect(idleObject["progress"] is NSNull)
        #expect((idleObject["activities"] as? [Any])?.isEmpty == true)
        #expect(idleObject["service"] as? Bool == true)

        let id = try probe.begin("json \"quoted\"\tlabel")
        try probe.call("UpdateActivity", [.uint32(id), .uint64(3), .uint64(4)])
        let busy = try service.netactivity(["status", "--json"])
        #expect(busy.exitStatus == 0, "\(busy)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(busy.stdout.utf8)) as? [String: Any])
        #expect(object["active"] as? Bool == true)
        #expect((object["count"] as? NSNumber)?.intValue == 1)
        #expect((object["progress"] as? NSNumber)?.doubleValue == 0.75)
        let activities = try #require(object["activities"] as? [[String: Any]])
        #expect(activities.count == 1)
        let activity = try #require(activities.first)
        // Every declared property, under its name in snake case, and what a client works out.
        #expect(Set(activity.keys) == Set(ActivityObjectInterface.descriptor.properties.map {
            SnapshotFormat.jsonName($0.name.rawValue)
        } + ["remaining_seconds", "bus"]))
        #expect(Set(activity.keys).isSuperset(of: ["id", "process_id", "claimed_application", "user_id"]))
        #expect(activity["kind"] as? String == "other" && activity["claimed_application"] as? String == "")
        #expect((activity["id"] as? NSNumber)?.uint32Value == id)
        #expect(activity["owner"] as? String == probe.uniqueName)
        #expect(activity["label"] as? String == "json \"quoted\"\tlabel")
        #expect((activity["completed"] as? NSNumber)?.intValue == 3)
        #expect((activity["total"] as? NSNumber)?.intValue == 4)
        let started = try #require((activity["started"] as? NSNumber)?.doubleValue)
        #expect(abs(started / 1e6 - Date().timeIntervalSince1970) < 60, "started is µs since the epoch")
        // Attribution, as the service has it and `watch --format json` shows it.
        #expect((activity["process_id"] as? NSNumber)?.int32Value == getpid(), "\(activity)")
        #expect((activity["user_id"] as? NSNumber)?.uint32Value == getuid(), "\(activity)")
        let application = try attribution(of: id, on: service).application
        #expect(application?.isEmpty == false)
        #expect(activity["application"] as? String == application, "\(activity)")
    }

    /// What `watch --format json` says of activity `id`: its application, as the service has it.
    private func attribution(of id: UInt32, on service: ServiceDaemon) throws -> (application: String?, line: String) {
        let watcher = try service.startNetactivity(["watch", "--format", "json"])
        defer { watcher.send(signal: SIGTERM); _ = try? watcher.waitForExit(timeout: .seconds(10)) }
        let line = try #require(try watcher.readLine(timeout: .seconds(10)), "watch printed a state")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let activities = object["activities"] as? [[String: Any]] ?? []
        let activity = activities.first { ($0["id"] as? NSNumber)?.uint32Value == id }
        return (activity?["application"] as? String, line)
    }

    // MARK: - push and pop

    @Test func pushAndPopChangeTheCount() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()

        for expected in [1, 2] as [UInt32] {
            let result = try service.netactivity(["push"])
            #expect(result.exitStatus == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
            #expect(try probe.count() == expected)
        }
        for expected in [1, 0] as [UInt32] {
            let result = try service.netactivity(["pop"])
            #expect(result.exitStatus == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
            #expect(try probe.count() == expected)
        }
    }

    @Test func popAtZeroPrintsTheServiceErrorAndExits1() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["pop"])
        expectOneLineFailure(result, status: 1)
        #expect(result.stderr.contains("the shared counter is already 0"), "\(result)")
        #expect(result.stderr.contains("NotActive"), "\(result)")
        #expect(try service.probe().count() == 0)
    }

    // MARK: - No bus, no service

    @Test(arguments: [["status"], ["status", "--json"], ["push"], ["pop"]])
    func anUnreachableBusIsOneLine(_ arguments: [String]) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try netactivity(["--address", "unix:path=\(directory)/no-bus-here"] + arguments)
        expectOneLineFailure(result, status: 1)
        #expect(result.stderr.contains("cannot connect"), "\(result)")

        let malformed = try netactivity(["--address", "not-an-address"] + arguments)
        expectOneLineFailure(malformed, status: 1)
    }

    @Test(arguments: [["status"], ["status", "--json"], ["push"], ["pop"]])
    func aBusWithoutTheServiceIsOneLine(_ arguments: [String]) throws {
        let service = try ServiceDaemon(startService: false)
        let result = try service.netactivity(arguments)
        expectOneLineFailure(result, status: 1)
        #expect(result.stderr.contains("not running"), "\(result)")
    }

    // MARK: - Help

    /// Every command the main help lists, so a new one is checked as soon as it is listed.
    @Test func everySubcommandHasHelp() throws {
        let main = try netactivity(["--help"])
        let section = main.stdout.components(separatedBy: "Commands:\n").dropFirst().first?
            .components(separatedBy: "\n\n").first ?? ""
        let commands = section.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }
        #expect(Set(commands).isSuperset(of: ["status", "push", "pop", "run", "watch", "tray", "help", "version"]),
                "the main help lists \(commands)")
        for command in commands {
            for arguments in [[command, "--help"], [command, "-h"], ["help", command]] {
                let result = try netactivity(arguments)
                #expect(result.exitStatus == 0, "\(arguments): \(result)")
                #expect(result.stdout.hasPrefix("Usage: netactivity \(command)"), "\(arguments): \(result)")
                #expect(result.stderr.isEmpty, "\(arguments): \(result)")
            }
        }
    }

    @Test func theMainHelpListsEveryCommand() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try netactivity(arguments)
            #expect(result.exitStatus == 0, "\(result)")
            #expect(result.stdout.hasPrefix("Usage: netactivity"))
            for command in ["status", "push", "pop", "run", "watch", "--address", "--system"] {
                #expect(result.stdout.contains(command), "help mentions \(command)")
            }
        }
        let version = try netactivity(["--version"])
        #expect(version.exitStatus == 0)
        #expect(version.stdout == "netactivity \(NetActivityBus.version)\n")
    }

    // MARK: - Usage errors

    @Test(arguments: [
        [],
        ["frobnicate"],
        ["--frobnicate", "status"],
        ["status", "--frobnicate"],
        ["status", "extra"],
        ["push", "extra"],
        ["pop", "--json"],
        ["watch", "--format", "xml"],
        ["watch", "--format"],
        ["watch", "--json"],
        ["run"],
        ["run", "--"],
        ["run", "--label"],
        ["run", "--label", "x"],
        ["run", "--frob", "--", "true"],
        ["--address"],
        ["--address", "", "status"],
        ["--system", "--address", "unix:path=/x", "status"],
        ["help", "frobnicate"],
    ])
    func usageErrorsExit2WithOneLine(_ arguments: [String]) throws {
        let result = try netactivity(arguments)
        expectOneLineFailure(result, status: 2)
    }
}
