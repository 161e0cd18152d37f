import BusTestSupport
import NetActivityTestSupport
import NetActivity
import NetActivityCLI
import Testing

/// The bus options are accepted after the subcommand too, without reaching into what `run`
/// runs or into a subcommand option's value.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct InvocationTests {
    @Test(arguments: [
        (["status", "--address", "unix:path=/b"], Bus.address("unix:path=/b")),
        (["status", "--json", "--address=unix:path=/b"], .address("unix:path=/b")),
        (["--address", "unix:path=/b", "status"], .address("unix:path=/b")),
        (["watch", "--system", "--format", "json"], .system),
        (["push", "--system"], .system),
        (["run", "--address", "unix:path=/b", "--", "true"], .address("unix:path=/b")),
        (["run", "--", "curl", "--system"], .session),
        (["run", "sleep", "1", "--address", "x"], .session),
        (["run", "--label", "--system", "--", "true"], .session),
    ])
    func busOptionsAnywhereBeforeTheCommand(_ arguments: [String], _ bus: Bus) throws {
        #expect(try Invocation.parse(arguments).bus == bus)
    }

    @Test func whatRunRunsKeepsItsOwnOptions() throws {
        let invocation = try Invocation.parse(["run", "--system", "--label", "--system", "--", "curl", "--address", "y"])
        #expect(invocation.bus == .system)
        #expect(invocation.command == .run(label: "--system", command: ["curl", "--address", "y"]))
        #expect(try Invocation.parse(["status", "--json", "--system"]).command == .status(json: true))
    }

    @Test(arguments: [
        ["status", "--system", "--address", "unix:path=/x"],
        ["--system", "status", "--address", "unix:path=/x"],
        ["status", "--address"],
        ["status", "--address", ""],
    ])
    func conflictingOrMissingBusOptionsAreUsageErrors(_ arguments: [String]) {
        #expect(throws: Invocation.UsageError.self) { try Invocation.parse(arguments) }
    }

    @Test func statusWithTheAddressAfterTheSubcommandRuns() throws {
        let service = try ServiceDaemon()
        let result = try netactivity(["status", "--address", service.address])
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout.contains("Active:     no"), "\(result)")
    }
}
