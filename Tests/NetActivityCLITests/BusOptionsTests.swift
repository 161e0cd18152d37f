import BusTestSupport
import NetActivity
import NetActivityCLI
import NetActivityTray
import Testing

/// What the bus options select: where push, pop and run report, and which services status,
/// watch and tray follow.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct BusOptionsTests {
    @Test(arguments: [
        (["watch"], Bus.session, Bus?.some(.session), Bus?.some(.system)),
        (["watch", "--session-only"], .session, .session, nil),
        (["--session-only", "status"], .session, .session, nil),
        (["status", "--system"], .system, nil, .system),
        (["status", "--address", "unix:path=/a"], .address("unix:path=/a"), .address("unix:path=/a"), nil),
        (["--address=unix:path=/a", "watch", "--system-address", "unix:path=/b"],
         .address("unix:path=/a"), .address("unix:path=/a"), .address("unix:path=/b")),
        (["watch", "--system-address=unix:path=/b"], .session, .session, .address("unix:path=/b")),
        (["--system", "status", "--system-address", "unix:path=/b"],
         .address("unix:path=/b"), nil, .address("unix:path=/b")),
        (["push", "--system-address", "unix:path=/b"], .session, .session, .address("unix:path=/b")),
    ])
    func optionsSelectTheBuses(_ arguments: [String], _ bus: Bus, _ session: Bus?, _ system: Bus?) throws {
        let invocation = try Invocation.parse(arguments)
        #expect(invocation.bus == bus, "\(arguments)")
        #expect(invocation.services == FollowedServices(session: session, system: system), "\(arguments)")
    }

    @Test func theBusOptionsStayOutOfWhatRunRuns() throws {
        let invocation = try Invocation.parse(["run", "--session-only", "--", "curl", "--system-address", "x"])
        #expect(invocation.command == .run(label: nil, command: ["curl", "--system-address", "x"]))
        #expect(invocation.services.system == nil)
    }

    @Test(arguments: [
        ["--system", "--session-only", "status"],
        ["status", "--session-only", "--system"],
        ["watch", "--session-only", "--system-address", "unix:path=/b"],
        ["watch", "--system-address"],
        ["watch", "--system-address", ""],
        ["watch", "--session-only=yes"],
        ["--system=yes", "status"],
    ])
    func conflictsAndMissingValuesAreUsageErrors(_ arguments: [String]) {
        #expect(throws: Invocation.UsageError.self) { try Invocation.parse(arguments) }
    }
}
