import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/interface.md, "Process behaviour": the name without queueing, `--replace`, SIGTERM/SIGINT,
/// loss of the bus, and no wake-ups while idle — run as users meet the binary.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct NameOwnershipTests {
    @Test func secondInstanceExitsOneNamingTheOwner() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let owner = try #require(try client.connection.owner(of: NetActivityBus.name))

        let second = try run(try builtProduct("netactivityd"), ["--address", service.bus.address])

        #expect(second.exitStatus == 1, "\(second)")
        #expect(
            second.stderr.contains(owner.rawValue) || second.stderr.contains("\(service.process.pid)"),
            "stderr names neither \(owner) nor pid \(service.process.pid): \(second.stderr)")
        #expect(service.process.isRunning)
        #expect(try client.connection.owner(of: NetActivityBus.name) == owner)
    }

    @Test func replaceTakesTheNameOverAndTheOldInstanceExitsZero() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()

        try service.replace()
        let successor = service.process

        let old = try #require(service.replaced.last).waitForExit(timeout: .seconds(15))
        #expect(old.exitStatus == 0, "\(old)")
        #expect(successor.isRunning, "the successor exited: \(successor.stderrText)")
        #expect(try client.connection.processID(of: NetActivityBus.name) == UInt32(successor.pid))
        try client.call("Push")
        #expect(try client.count() == 1)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func terminationSignalReleasesTheNameAndExitsZero(signal: Int32) throws {
        let service = try ServiceDaemon()
        let client = try service.probe()

        service.process.send(signal: signal)
        let result = try service.process.waitForExit(timeout: .seconds(15))

        #expect(result.exitStatus == 0, "\(result)")
        #expect(try client.connection.owner(of: NetActivityBus.name) == nil)
        // GetNameOwner itself fails for a name nobody owns.
        let raw = try run(
            "busctl",
            ["--address=\(service.bus.address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus", "GetNameOwner", "s", NetActivityBus.name.rawValue])
        #expect(!raw.succeeded, "\(raw)")
    }

    @Test func losingTheBusExitsNonZeroWithAMessage() throws {
        let service = try ServiceDaemon()

        service.bus.kill()
        let result = try service.process.waitForExit(timeout: .seconds(15))

        #expect(result.exitStatus != nil, "killed instead of exiting: \(result)")
        #expect(result.exitStatus != 0, "\(result)")
        #expect(!result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "no message: \(result)")
    }
}

// MARK: - Command line

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CommandLineTests {
    @Test func helpListsEveryFlag() throws {
        let result = try run(try builtProduct("netactivityd"), ["--help"])

        #expect(result.exitStatus == 0, "\(result)")
        for flag in [
            "--system", "--address", "--replace", "--throttle-ms", "--activation-delay", "--completion-delay",
            "--version", "--help",
        ] {
            #expect(result.stdout.contains(flag), "--help does not mention \(flag)")
        }
    }

    @Test func versionPrintsTheVersion() throws {
        let result = try run(try builtProduct("netactivityd"), ["--version"])

        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout.contains(NetActivityBus.version), "\(result)")
        #expect(result.stdout.filter { $0 == "\n" }.count == 1, "\(result)")
    }

    @Test(arguments: [
        ["--bogus"], ["--throttle-ms", "x"], ["--activation-delay", "-1"], ["--address"],
        ["--completion-delay", "nan"], ["--throttle-ms"],
    ])
    func badFlagExitsTwoWithOneLine(arguments: [String]) throws {
        let result = try run(try builtProduct("netactivityd"), arguments, timeout: .seconds(15))

        #expect(result.exitStatus == 2, "\(result)")
        #expect(result.stderr.hasSuffix("\n") && result.stderr.filter { $0 == "\n" }.count == 1, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }
}

// MARK: - Idle

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct IdleTests {
    @Test func settledServiceDoesNotWakeUp() throws {
        let service = try ServiceDaemon([
            "--throttle-ms", "50", "--activation-delay", "0.2", "--completion-delay", "0.2",
        ])
        let client = try service.probe()
        try client.subscribe()

        // Exercise every timer the service has: throttle windows, both debounce delays.
        try client.call("Push")
        _ = try client.waitForSignal(timeout: .seconds(15)) { $0["Visible"] == .boolean(true) }
        let id = try client.begin("download")
        try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])
        try client.call("EndActivity", [.uint32(id)])
        try client.call("Pop")
        _ = try client.waitForSignal(timeout: .seconds(15)) { $0["Visible"] == .boolean(false) }
        // The last deadline has passed; a throttle window still open would close within
        // this half second, several windows long.
        _ = client.collectPropertiesChanged(for: .milliseconds(500))

        let before = ProcessStatistics.sample(service.process.pid)
        Thread.sleep(forTimeInterval: 3)
        let after = ProcessStatistics.sample(service.process.pid)

        #expect(!before.threads.isEmpty)
        #expect(after.contextSwitches == before.contextSwitches, "woke up while idle: \(ProcessStatistics.wakeUps(from: before, to: after))")
        #expect(after.cpuTicks == before.cpuTicks, "used CPU while idle: \(before.cpuTicks) → \(after.cpuTicks) ticks")
        #expect(service.process.isRunning)
    }
}
