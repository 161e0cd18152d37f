import NetActivityBridge
import NetActivityCLI
import Testing

/// `netactivity bridge`'s options: the sources, and the traffic source's threshold and ignore
/// list, in either order and with `=`.
@Suite struct BridgeInvocationTests {
    @Test func everySourceIsOnByDefault() throws {
        #expect(
            try Invocation.parse(["bridge"]).command
                == .bridge(sources: [.packagekit, .launcher, .traffic, .plasmaJobs], trafficThreshold: 262_144, trafficIgnored: []))
        #expect(
            try Invocation.parse(["bridge", "--without", "traffic"]).command == .bridge(sources: [.packagekit, .launcher, .plasmaJobs]))
        #expect(
            try Invocation.parse(["bridge", "--without", "plasma-jobs"]).command == .bridge(sources: [.packagekit, .launcher, .traffic]))
        #expect(try Invocation.parse(["bridge", "--only", "plasma-jobs"]).command == .bridge(sources: [.plasmaJobs]))
        #expect(try Invocation.parse(["bridge", "--only", "traffic"]).command == .bridge(sources: [.traffic]))
    }

    @Test func theTrafficOptions() throws {
        let command = try Invocation.parse([
            "bridge", "--traffic-threshold", "1000000", "--only=traffic", "--traffic-ignore=org.example.A,curl",
            "--traffic-ignore", "rsync",
        ]).command
        #expect(command == .bridge(sources: [.traffic], trafficThreshold: 1_000_000, trafficIgnored: ["org.example.A", "curl", "rsync"]))
    }

    @Test func systemIsTheSystemSideBridgeBeforeOrAfterTheCommand() throws {
        for arguments in [["bridge", "--system"], ["--system", "bridge"], ["bridge", "--system", "--system-address", "unix:path=/b"]] {
            let invocation = try Invocation.parse(arguments)
            #expect(invocation.services.session == nil && invocation.services.system != nil, "\(arguments)")
            #expect(invocation.command == .bridge(sources: [.packagekit, .launcher, .traffic, .plasmaJobs]), "\(arguments)")
        }
        let ignoring = try Invocation.parse(["--system", "bridge", "--traffic-ignore", "snapd.service"])
        #expect(ignoring.command == .bridge(sources: [.packagekit, .launcher, .traffic, .plasmaJobs], trafficIgnored: ["snapd.service"]))
    }

    @Test(arguments: [
        ["bridge", "--system", "--only", "packagekit,launcher"],
        ["--system", "bridge", "--without", "traffic"],
    ])
    func theSystemSideRunsTrafficOnly(_ arguments: [String]) {
        #expect(throws: Invocation.UsageError.self) { try Invocation.parse(arguments) }
    }

    @Test(arguments: [
        ["bridge", "--traffic-threshold", "0"],
        ["bridge", "--traffic-threshold", "-5"],
        ["bridge", "--traffic-threshold", "lots"],
        ["bridge", "--traffic-threshold"],
        ["bridge", "--traffic-ignore"],
        ["bridge", "--only", "traffic", "--without", "launcher"],
        ["bridge", "--traffic"],
    ])
    func badTrafficOptionsAreUsageErrors(_ arguments: [String]) {
        #expect(throws: Invocation.UsageError.self) { try Invocation.parse(arguments) }
    }
}
