import BusTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The harness every bus test stands on: a private dbus-daemon that foreign clients can reach,
/// and child processes that are read with deadlines and never leaked.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct PrivateBusTests {
    @Test func busctlReachesThePrivateBus() throws {
        try requireTool("busctl")
        let bus = try PrivateBus()
        defer { bus.stop() }
        #expect(bus.address.hasPrefix("unix:path=/tmp/netactivity-bus-"))

        let result = try run(
            "busctl",
            ["--address=\(bus.address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus", "GetId"])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdout.hasPrefix("s \""), "\(result)")
    }

    @Test func dbusSendReachesThePrivateBusAsTheSessionBus() throws {
        try requireTool("dbus-send")
        let bus = try PrivateBus()
        defer { bus.stop() }

        let result = try run(
            "dbus-send",
            ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
             "org.freedesktop.DBus.GetId"],
            environment: bus.sessionEnvironment)
        #expect(result.succeeded, "\(result)")
        #expect(result.stdout.contains("string \""), "\(result)")
    }

    @Test func stopEndsTheDaemonAndRemovesItsDirectory() throws {
        let bus = try PrivateBus()
        let pid = bus.pid
        bus.stop()
        bus.stop()
        #expect(!bus.isRunning)
        #expect(!FileManager.default.fileExists(atPath: bus.directory))
        // Reaped, not a zombie: the pid is gone.
        #expect(Glibc.kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func killedBusDropsItsClients() throws {
        try requireTool("dbus-monitor")
        let bus = try PrivateBus()
        let monitor = try ChildProcess("dbus-monitor", ["--address", bus.address])
        // dbus-monitor prints the NameAcquired signal for itself once it is connected.
        try waitUntil("dbus-monitor to connect") { monitor.stdoutText.contains("NameAcquired") }

        bus.kill()
        let result = try monitor.waitForExit(timeout: .seconds(10))
        #expect(result.signal == nil)
        #expect(!bus.isRunning)
    }

    @Test func childProcessReadsLinesAndCanBeKilled() throws {
        let child = try ChildProcess("sh", ["-c", "echo first; echo second >&2; echo third; exec sleep 60"])
        #expect(try child.readLine(timeout: .seconds(10)) == "first")
        #expect(try child.readLine(timeout: .seconds(10)) == "third")
        #expect(throws: BusTestError.self) { try child.readLine(timeout: .milliseconds(50)) }
        #expect(child.isRunning)

        child.send(signal: SIGKILL)
        let result = try child.waitForExit(timeout: .seconds(10))
        #expect(result.signal == SIGKILL)
        #expect(result.exitStatus == nil)
        #expect(result.stderr == "second\n")
        #expect(!child.isRunning)
        #expect(try child.readLine(timeout: .seconds(1)) == nil)
    }

    @Test func runPassesInputAndEnvironmentButNoAmbientBus() throws {
        setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent", 0)
        let result = try run(
            "sh", ["-c", "cat; echo \"$GREETING\"; echo \"${DBUS_SESSION_BUS_ADDRESS-unset}\"; exit 3"],
            environment: ["GREETING": "hello"], input: "piped\n")
        #expect(result.exitStatus == 3)
        #expect(result.stdout == "piped\nhello\nunset\n")
    }

    @Test func runKillsACommandThatOverruns() throws {
        let start = ContinuousClock.now
        #expect(throws: BusTestError.self) {
            try run("sleep", ["60"], timeout: .milliseconds(200))
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func missingToolsAreNamedWithTheirPackage() throws {
        #expect(throws: BusTestError.self) { try requireTool("netactivity-no-such-tool") }
        #expect(throws: BusTestError.self) { try run("netactivity-no-such-tool", []) }
        #expect(throws: BusTestError.self) { try builtProduct("netactivity-no-such-product") }
        #expect(throws: BusTestError.self) {
            try waitUntil("never", timeout: .milliseconds(20)) { false }
        }
    }
}
