import BusTestSupport
import Testing

/// `netactivity tray` as a user types it: help, usage errors, an unreachable bus.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayCommandLineTests {
    private func netactivity(_ arguments: [String]) throws -> ProcessResult {
        try run(try builtProduct("netactivity"), arguments, timeout: .seconds(30))
    }

    @Test func trayHasHelp() throws {
        for arguments in [["tray", "--help"], ["tray", "-h"], ["help", "tray"]] {
            let result = try netactivity(arguments)
            #expect(result.exitStatus == 0, "\(arguments): \(result)")
            #expect(result.stdout.hasPrefix("Usage: netactivity tray"), "\(arguments): \(result)")
            #expect(result.stdout.contains("--icon NAME") && result.stdout.contains("--idle-icon NAME"))
            #expect(result.stdout.contains("--no-progress-ring"))
            #expect(result.stderr.isEmpty)
        }
        let main = try netactivity(["--help"])
        #expect(main.stdout.contains("tray [--icon NAME] [--idle-icon NAME] [--no-progress-ring]"), "\(main)")
    }

    @Test(arguments: [
        ["tray", "--icon"], ["tray", "--idle-icon"], ["tray", "--icon="], ["tray", "--frob"], ["tray", "extra"],
        ["tray", "--no-progress-ring=yes"],
    ])
    func usageErrorsExit2WithOneLine(_ arguments: [String]) throws {
        let result = try netactivity(arguments)
        #expect(result.exitStatus == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("netactivity: tray: "), "\(result)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result)")
    }

    @Test func anUnreachableBusIsOneLineAndStatus1() throws {
        let result = try netactivity(["--address", "unix:path=/nonexistent/bus", "tray"])
        #expect(result.exitStatus == 1, "\(result)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result)")
        #expect(result.stderr.contains("cannot connect"), "\(result)")
    }
}
