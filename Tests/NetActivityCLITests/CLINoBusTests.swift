import BusTestSupport
import DBus
import Foundation
import NetActivityTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `netactivity` where there is no bus to be had: no session bus at all is one line that says
/// how to name one; no system bus at all (as in most containers) is silence.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CLINoBusTests {
    /// An environment with no session bus (no variable, an empty runtime directory, no X11
    /// display to autolaunch on) and a system bus address whose socket does not exist.
    static func noBuses(_ runtime: String) -> [String: String] {
        ["XDG_RUNTIME_DIR": runtime, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(runtime)/no-system-bus-socket"]
    }

    @Test(arguments: [["status"], ["status", "--json"], ["push"], ["pop"], ["tray"], ["watch"]])
    func noSessionBusIsOneLineNamingTheVariableAndTheOption(_ arguments: [String]) throws {
        let runtime = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let netactivity = try builtProduct("netactivity")
        if arguments == ["watch"] {
            // watch keeps going (a session bus may yet start) after saying so once.
            let watch = try ChildProcess(netactivity, arguments, environment: Self.noBuses(runtime))
            #expect(try watch.readLine(timeout: .seconds(10))?.hasPrefix("idle") == true)
            try waitUntil("watch to say there is no session bus") { !watch.stderrText.isEmpty }
            watch.send(signal: SIGTERM)
            let result = try watch.waitForExit(timeout: .seconds(10))
            Self.expectTheHint(result.stderr)
            return
        }
        let result = try run(netactivity, arguments, environment: Self.noBuses(runtime))
        expectOneLineFailure(result, status: 1)
        Self.expectTheHint(result.stderr)
    }

    /// libdbus takes `$XDG_RUNTIME_DIR/bus` only as a socket: a plain file there is no bus either.
    @Test func aFileThatIsNoSocketIsNoSessionBus() throws {
        let runtime = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        try "".write(toFile: runtime + "/bus", atomically: true, encoding: .utf8)
        let result = try run(try builtProduct("netactivity"), ["status"], environment: Self.noBuses(runtime))
        expectOneLineFailure(result, status: 1)
        Self.expectTheHint(result.stderr)
    }

    @Test func runWithoutASessionBusStillRunsTheCommandAndSaysHowToNameOne() throws {
        let runtime = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let result = try run(try builtProduct("netactivity"), ["run", "--", "sh", "-c", "echo ran"],
                             environment: Self.noBuses(runtime))
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout == "ran\n")
        Self.expectTheHint(result.stderr)
    }

    static func expectTheHint(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(lines(stderr).count == 1, "one line: \(stderr)", sourceLocation: sourceLocation)
        #expect(stderr.contains("DBUS_SESSION_BUS_ADDRESS"), "\(stderr)", sourceLocation: sourceLocation)
        #expect(stderr.contains("--address"), "\(stderr)", sourceLocation: sourceLocation)
        #expect(!stderr.contains("autolaunch"), "not libdbus's X11 message: \(stderr)", sourceLocation: sourceLocation)
    }

    /// A session bus, and a system bus whose socket does not exist: `status` and `watch` show
    /// the session and say nothing of the system.
    @Test func noSystemBusAtAllIsSilent() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let runtime = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        var environment = Self.noBuses(runtime)
        environment["DBUS_SESSION_BUS_ADDRESS"] = service.address
        let netactivity = try builtProduct("netactivity")

        for arguments in [["status"], ["status", "--json"]] {
            let status = try run(netactivity, arguments, environment: environment)
            #expect(status.exitStatus == 0, "\(status)")
            #expect(status.stderr.isEmpty, "\(arguments): \(status)")
        }

        var watch = WatchReader(try ChildProcess(netactivity, ["watch"], environment: environment))
        // The first line waits for both sides' first states, so the system side has failed by then.
        #expect(try watch.next() == "idle")
        try probe.call("Push")
        try watch.next("active: 1") { $0 == "active: 1" }
        watch.process.send(signal: SIGTERM)
        let result = try watch.process.waitForExit(timeout: .seconds(10))
        #expect(result.stderr.isEmpty, "\(result)")
    }

    /// The same system bus named explicitly (`--system`) is a failure to report.
    @Test func noSystemBusIsAnErrorWhenItIsTheOnlyBusAskedFor() throws {
        let runtime = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let result = try run(try builtProduct("netactivity"), ["status", "--system"], environment: Self.noBuses(runtime))
        expectOneLineFailure(result, status: 1)
        #expect(result.stderr.contains("there is no system bus"), "\(result)")
    }
}
