import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `netactivity run`: an activity held for a command's lifetime, its exit status, signals.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLIRunTests {
    /// A shell command that prints its pid, then becomes `sleep 30` (so the pid is the sleep's).
    static let printPIDThenSleep = "echo $$; exec sleep 30"

    @Test func theActivityIsHeldWhileTheCommandRuns() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let runner = try service.startNetactivity(["run", "--label", "Backup photos", "--", "sh", "-c", Self.printPIDThenSleep])
        let pidLine = try #require(try runner.readLine(timeout: .seconds(10)))
        let commandPID = try #require(pid_t(pidLine), "the command printed its pid")

        // The activity is registered before the command starts.
        let activities = try probe.activities()
        let activity = try #require(activities.first { $0.label == "Backup photos" }, "\(activities)")
        #expect(try probe.processID(of: activity.owner) == UInt32(runner.pid), "owned by netactivity")
        #expect(try probe.count() == 1)

        kill(commandPID, SIGTERM)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 128 + SIGTERM, "a command killed by SIGTERM gives 143: \(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test func theDefaultLabelIsTheCommandLine() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let runner = try service.startNetactivity(["run", "--", "sh", "-c", Self.printPIDThenSleep])
        let commandPID = try #require(try runner.readLine(timeout: .seconds(10)).flatMap { pid_t($0) })
        #expect(try probe.activities().map(\.label) == ["sh -c \(Self.printPIDThenSleep)"])
        kill(commandPID, SIGKILL)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 128 + SIGKILL, "\(result)")
    }

    /// A label past the service's limit is cut on a character boundary, said once on stderr,
    /// and the command runs all the same: a backup script with a long label still backs up.
    @Test func aLabelTooLongIsCutAndTheCommandStillRuns() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        // 255 bytes of ASCII, then "é" (2 bytes) straddling the limit, then more.
        let label = String(repeating: "x", count: 255) + "é" + String(repeating: "y", count: 40)
        let runner = try service.startNetactivity(["run", "--label", label, "--", "sh", "-c", Self.printPIDThenSleep])
        let commandPID = try #require(try runner.readLine(timeout: .seconds(10)).flatMap { pid_t($0) }, "the command ran")

        let labels = try probe.activities().map(\.label)
        #expect(labels == [String(repeating: "x", count: 255)], "cut before the 2-byte character: \(labels)")

        kill(commandPID, SIGKILL)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 128 + SIGKILL, "\(result)")
        #expect(lines(result.stderr).count == 1, "one line on stderr: \(result)")
        #expect(result.stderr.hasPrefix("netactivity: run: the label is \(label.utf8.count) bytes"), "\(result)")
        #expect(try probe.activities().isEmpty)
    }

    @Test func aLabelTooLongStillRunsAShortCommand() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["run", "--label=" + String(repeating: "ü", count: 200), "--", "sh", "-c", "echo ran; exit 4"])
        #expect(result.exitStatus == 4, "the command's status: \(result)")
        #expect(result.stdout == "ran\n", "\(result)")
        #expect(lines(result.stderr).count == 1, "\(result)")
    }

    @Test(arguments: [("exit 0", Int32(0)), ("exit 3", 3), ("exit 255", 255), ("kill -KILL $$", 137), ("kill -INT $$", 130)])
    func theExitStatusIsTheCommands(_ script: String, _ status: Int32) throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["run", "--label", "status", "--", "sh", "-c", script])
        #expect(result.exitStatus == status, "`\(script)`: \(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(try service.probe().activities().isEmpty)
    }

    @Test func theCommandsOutputAndArgumentsPassThrough() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["run", "-l", "echo", "--", "printf", "%s|", "a b", "--label", "-x"])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout == "a b|--label|-x|")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalToNetactivityIsForwardedToTheCommand(_ signal: Int32) throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let marker = directory + "/signal"
        let script = """
            trap 'kill $sleeper; echo caught > \(marker); exit 7' TERM INT
            sleep 30 & sleeper=$!
            echo ready
            wait $sleeper
            """
        let runner = try service.startNetactivity(["run", "--label", "Trapping", "--", "sh", "-c", script])
        #expect(try runner.readLine(timeout: .seconds(10)) == "ready")
        #expect(try probe.activity("Trapping") != nil)

        runner.send(signal: signal)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 7, "netactivity exits with the command's status after the trap: \(result)")
        #expect(try String(contentsOfFile: marker, encoding: .utf8) == "caught\n")
        #expect(try probe.activities().isEmpty)
    }

    @Test func aSignalKillingTheCommandGives128PlusN() throws {
        let service = try ServiceDaemon()
        let runner = try service.startNetactivity(["run", "--label", "Default", "--", "sh", "-c", "echo ready; exec sleep 30"])
        #expect(try runner.readLine(timeout: .seconds(10)) == "ready")
        runner.send(signal: SIGTERM)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 128 + SIGTERM, "\(result)")
        #expect(try service.probe().activities().isEmpty)
    }

    @Test func netactivityKilledWithSIGKILLLosesItsActivity() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let runner = try service.startNetactivity(["run", "--label", "Doomed", "--", "sh", "-c", Self.printPIDThenSleep])
        let commandPID = try #require(try runner.readLine(timeout: .seconds(10)).flatMap { pid_t($0) })
        defer { kill(commandPID, SIGKILL) }
        #expect(try probe.activity("Doomed") != nil)

        runner.send(signal: SIGKILL)
        let result = try runner.waitForExit(timeout: .seconds(10))
        #expect(result.signal == SIGKILL)
        try waitUntil("the service to release the killed runner's activity") {
            try probe.activities().isEmpty && probe.count() == 0
        }
    }

    @Test(arguments: ["/nonexistent/command", "netactivity-no-such-command"])
    func aMissingCommandExits127WithOneLine(_ command: String) throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["run", "--label", "missing", "--", command, "arg"])
        expectOneLineFailure(result, status: 127)
        #expect(result.stderr.contains(command), "\(result)")
        #expect(try service.probe().activities().isEmpty)
    }

    @Test func withoutAServiceTheCommandStillRuns() throws {
        let service = try ServiceDaemon(startService: false)
        let result = try service.netactivity(["run", "--label", "offline", "--", "sh", "-c", "echo ran; exit 4"])
        #expect(result.exitStatus == 4, "\(result)")
        #expect(result.stdout == "ran\n")
        #expect(lines(result.stderr).count == 1, "one line about the missing service: \(result)")
    }
}
