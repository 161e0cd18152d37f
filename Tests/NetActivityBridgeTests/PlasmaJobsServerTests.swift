import BusTestSupport
import DBus
import Foundation
import NetActivityTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The plasma-jobs source off Plasma: `netactivity bridge --only plasma-jobs` owns
/// `org.kde.JobViewServer` and `org.kde.kuiserver` on a private session bus with the real
/// netactivityd, and a KDE program's jobs (`KDEJobClient`, which calls as KF6's and KF5's
/// trackers do) become activities.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized) struct PlasmaJobsServerTests {
    typealias Installed = LauncherBridge
    static let source = "plasma-jobs"
    static let server: BusName = "org.kde.JobViewServer"

    private static func start() throws -> (LauncherBridge, ChildProcess) {
        let harness = try LauncherBridge()
        let bridge = try harness.startBridge(only: source, name: server)
        try waitUntil("the bridge to own org.kde.kuiserver too") { try harness.ownerPID(of: "org.kde.kuiserver") == UInt32(bridge.pid) }
        return (harness, bridge)
    }

    // MARK: - The declaration against plasmashell's

    /// The interfaces as plasmashell 6.3 introspects them (captured in a Plasma session of the
    /// trixie root, `Fixtures/`): each interface's methods and signals, their arguments' types
    /// and directions, in order; names where plasmashell gives them.
    private static func members(_ xml: String, except standard: Set<String> = ["org.freedesktop.DBus.Properties",
        "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"]) throws -> [String: [String]] {
        let root = try #require(IntrospectionElement(parsing: xml))
        var result: [String: [String]] = [:]
        for interface in root.elements("interface") where !standard.contains(interface["name"] ?? "") {
            var members: [String] = []
            for member in interface.children where member.name == "method" || member.name == "signal" {
                let arguments = member.elements("arg").map { argument in
                    let direction = argument["direction"] ?? (member.name == "signal" ? "out" : "in")
                    return "\(argument["name"] ?? ""):\(argument["type"] ?? "")/\(direction)"
                }
                members.append("\(member.name) \(member["name"] ?? "")(\(arguments.joined(separator: ", ")))")
            }
            result[interface["name"] ?? ""] = members.sorted()
        }
        return result
    }

    private static func fixture(_ name: String) throws -> String {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        return try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theServerAndAJobIntrospectAsPlasmashellsDo() throws {
        let (harness, _) = try Self.start()
        let client = try KDEJobClient(address: harness.address)
        let server = try client.call("/JobViewServer", "org.freedesktop.DBus.Introspectable", "Introspect", [])
        let job = try client.requestView(Installed.tester.id)
        let view = try client.call(job, "org.freedesktop.DBus.Introspectable", "Introspect", [])
        guard case .string(let serverXML) = server.first, case .string(let viewXML) = view.first else {
            Issue.record("Introspect answered \(server) and \(view)")
            return
        }
        let plasmaServer = try Self.members(Self.fixture("plasmashell-6.3-JobViewServer.xml"))
        let plasmaView = try Self.members(Self.fixture("plasmashell-6.3-JobView.xml"))
        #expect(plasmaServer.keys.sorted() == ["org.kde.JobViewServer", "org.kde.JobViewServerV2", "org.kde.kuiserver"])
        #expect(plasmaView.keys.sorted() == ["org.kde.JobViewV2", "org.kde.JobViewV3"])
        #expect(try Self.members(serverXML) == plasmaServer)
        #expect(try Self.members(viewXML) == plasmaView)
    }

    // MARK: - KF6 and KF5 jobs

    @Test func aKF6JobIsAnActivityWithItsNameApplicationAndBytesUntilTerminate() throws {
        let (harness, _) = try Self.start()
        let client = try KDEJobClient(address: harness.address)
        // KUiServerV2JobTracker::registerJob: the first state rides in the hints.
        let job = try client.requestView(
            Installed.tester.id,
            hints: [("application-display-name", .string("Job Tester")), ("title", .string("Copying")),
                    ("descriptionLabel1", .string("Source")), ("descriptionValue1", .string("smb://nas/films/movie.mkv"))])
        try client.update(job, [("totalBytes", .uint64(4_000)), ("processedBytes", .uint64(1_000)), ("speed", .uint64(500))])
        try harness.waitForActivity("Copying: movie.mkv", "with its bytes") {
            $0["Completed"] == .uint64(1_000) && $0["Total"] == .uint64(4_000)
        }
        let activity = try #require(try harness.activities()["Copying: movie.mkv"])
        #expect(activity["ClaimedApplication"] == .string(Installed.tester.id))
        #expect(activity["Kind"] == .string("other"))
        try client.update(job, [("processedBytes", .uint64(3_000)), ("infoMessage", .string("Copying"))])
        try harness.waitForActivity("Copying: movie.mkv", "at 3,000 bytes") { $0["Completed"] == .uint64(3_000) }
        try client.terminate(job)
        try harness.waitForCount(0)
        #expect(throws: BusError.self) { try client.update(job, [("percent", .uint32(5))]) }
    }

    @Test func aKF5JobWithSettersShowsItsPercentAndAFalseClaimIsNotTaken() throws {
        let (harness, _) = try Self.start()
        let client = try KDEJobClient(address: harness.address, server: "org.kde.kuiserver")
        // The test's process is not org.example.Downloader: the claim is checked against it.
        let job = try client.requestViewKF5(Installed.downloader.id, icon: "folder-download")
        try client.v2(job, "setInfoMessage", [.string("Fetching feeds")])
        try client.v2(job, "setTotalAmount", [.uint64(12), .string("files")])
        try client.v2(job, "setPercent", [.uint32(25)])
        try harness.waitForActivity("Fetching feeds", "at 25 %") { $0["Fraction"] == .double(0.25) }
        let activity = try #require(try harness.activities()["Fetching feeds"])
        #expect(activity["ClaimedApplication"] != .string(Installed.downloader.id))
        #expect(activity["Icon"] == .string("folder-download"))
        #expect(try client.v2(job, "setDescriptionField", [.uint32(0), .string("Source"), .string("/a/b")]) == [.boolean(true)])
        #expect(try client.v2(job, "setDescriptionField", [.uint32(9), .string("x"), .string("y")]) == [.boolean(false)])
        try client.v2(job, "terminate", [.string("")])
        try harness.waitForCount(0)
    }

    // MARK: - Hostile callers

    @Test func malformedCallsGetTheContractsErrorsAndChangeNothing() throws {
        let (harness, bridge) = try Self.start()
        let client = try KDEJobClient(address: harness.address)
        let other = try KDEJobClient(address: harness.address)
        let job = try client.requestView("", hints: [("title", .string("Sync"))])
        try client.v2(job, "setPercent", [.uint32(10)])
        try harness.waitForActivity("Sync", "at 10 %") { $0["Fraction"] == .double(0.1) }

        func error(_ body: () throws -> Void) -> ErrorName? {
            do { try body() } catch let error as BusError { return error.name } catch { return nil }
            return nil
        }
        #expect(error { try client.v2(job, "setPercent", [.string("50")]) } == .invalidArgs)
        #expect(error { try client.v2(job, "setInfoMessage", [.string(String(repeating: "x", count: 5_000))]) } == .invalidArgs)
        #expect(error { try client.update(job, [("title", .string(String(repeating: "y", count: 5_000)))]) } == .invalidArgs)
        #expect(error { try other.v2(job, "setPercent", [.uint32(90)]) } == .accessDenied)
        #expect(error { try other.v2("/io/github/netactivity/Bridge/jobs/999", "setPercent", [.uint32(1)]) } == .unknownObject)
        #expect(error { try client.call("/JobViewServer", "org.kde.JobViewServerV2", "requestView", [.string("x")]) } == .invalidArgs)
        // Unknown units, keys and types are ignored.
        try client.v2(job, "setProcessedAmount", [.uint64(7), .string("parsecs")])
        try client.update(job, [("percent", .string("90")), ("colour", .string("red"))])
        try client.v2(job, "setPercent", [.uint32(20)])
        try harness.waitForActivity("Sync", "at 20 %") { $0["Fraction"] == .double(0.2) && $0["Total"] == .uint64(0) }
        #expect(try harness.probe.count() == 1)
        #expect(bridge.isRunning)
    }

    @Test func aFloodOfJobsStopsAtTheLimitPerCallerAndACallerLeavingEndsItsJobs() throws {
        let (harness, bridge) = try Self.start()
        var client: KDEJobClient? = try KDEJobClient(address: harness.address)
        var refused: ErrorName?
        for number in 0..<70 {
            do {
                let job = try client!.requestView("", hints: [("title", .string("Job \(number)"))])
                try client!.v2(job, "setPercent", [.uint32(1)])
            } catch let error as BusError {
                refused = error.name
                #expect(number == 64)
                break
            }
        }
        #expect(refused == .limitsExceeded)
        try harness.waitForCount(64)
        // Another caller still gets a job.
        let second = try KDEJobClient(address: harness.address)
        _ = try second.requestView("", hints: [("title", .string("Other"))])
        try harness.waitForCount(65)
        // The caller leaves without terminate: its jobs end with it.
        client = nil
        try harness.waitForCount(1)
        #expect(bridge.isRunning)
    }

    // MARK: - Giving the names up

    @Test func aConnectionAskingWithReplacementTakesTheNamesAndTheServedJobsEnd() throws {
        let (harness, bridge) = try Self.start()
        let client = try KDEJobClient(address: harness.address)
        _ = try client.requestView("", hints: [("title", .string("Served"))])
        try harness.waitForActivity("Served", "served")

        // plasmashell asks for both names replacing their owner.
        let shell = try Connection(.address(harness.address))
        #expect(try shell.requestName("org.kde.JobViewServer", options: [.replaceExisting, .doNotQueue]) == .primaryOwner)
        #expect(try shell.requestName("org.kde.kuiserver", options: [.replaceExisting, .doNotQueue]) == .primaryOwner)
        try harness.waitForCount(0)

        // Once it leaves, the bridge serves again.
        _ = try shell.releaseName("org.kde.JobViewServer")
        _ = try shell.releaseName("org.kde.kuiserver")
        try waitUntil("the bridge to take the freed names") {
            try harness.ownerPID(of: "org.kde.JobViewServer") == UInt32(bridge.pid)
                && harness.ownerPID(of: "org.kde.kuiserver") == UInt32(bridge.pid)
        }
        withExtendedLifetime(shell) {}
    }

    @Test func theBridgeLeavesTheNamesAloneWhenAskedWithout() throws {
        let harness = try LauncherBridge()
        let bridge = try harness.startBridge(only: "launcher", name: "com.canonical.Unity")
        #expect(try harness.ownerPID(of: Self.server) == nil)
        #expect(bridge.isRunning)
    }
}
