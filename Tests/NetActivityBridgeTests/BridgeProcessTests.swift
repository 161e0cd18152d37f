import BusTestSupport
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity bridge` as a process: one per session, sources chosen by --only/--without, a
/// source that cannot start said once while the others go on.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct BridgeProcessTests {
    @Test func aSecondBridgeLeavesAtOnce() throws {
        let service = try ServiceDaemon()
        let first = try service.startNetactivity(["bridge", "--only", "launcher"])
        defer {
            first.send(signal: SIGTERM)
            _ = try? first.waitForExit(timeout: .seconds(10))
        }
        try waitUntil("the first bridge owns its name") {
            (try? service.busctl(["status", "io.github.netactivity.Bridge"]))?.succeeded == true
        }
        let second = try service.netactivity(["bridge"])
        #expect(second.exitStatus == 0, "\(second)")
        #expect(second.stderr.contains("another bridge already runs"), "\(second.stderr)")
    }

    @Test func unknownSourcesAreAUsageError() throws {
        let service = try ServiceDaemon()
        let result = try service.netactivity(["bridge", "--only", "packagekit,floppy"])
        #expect(result.exitStatus == 2, "\(result)")
        #expect(result.stderr.contains("packagekit, launcher"), "\(result.stderr)")
        let both = try service.netactivity(["bridge", "--only", "launcher", "--without", "packagekit"])
        #expect(both.exitStatus == 2, "\(both)")
    }
}
