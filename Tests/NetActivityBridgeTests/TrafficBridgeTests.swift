import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import StackTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity bridge --only traffic` against real transfers: real curl and a UDP sender in a
/// network namespace of the test's own, a pacing server in another, the bridge in the client's
/// namespace reporting to a private bus, and a real cgroup named as a systemd app scope.
/// Traffic only ever goes between those two namespaces.
@Suite(
    .system, .tags(.system), .timeLimit(.minutes(5)), .serialized,
    .enabled(if: TrafficNetwork.unavailable == nil, Comment(rawValue: TrafficNetwork.unavailable ?? "")))
struct TrafficBridgeTests {
    /// Everything one test runs: the bus with the service, the namespaces, the server, the
    /// bridge, and a client that remembers every activity the service ever showed.
    final class Setup {
        let service: ServiceDaemon
        let network: TrafficNetwork
        let server: PacingServer
        let bridge: ChildProcess
        let scope: AppScope
        let data: URL
        let client: NetActivityClient
        let seen = SeenActivities()
        private var observation: Observation?

        static let desktopID = "org.example.Fetcher"

        /// The bridge runs the sources `only` (the traffic source, and those it is checked beside).
        init(options: [String] = [], only sources: String = "traffic") throws {
            service = try ServiceDaemon()
            network = try TrafficNetwork()
            server = try PacingServer(in: network)
            scope = try AppScope(desktopID: Self.desktopID)
            data = FileManager.default.temporaryDirectory.appendingPathComponent("na-traffic-\(getpid())-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: data.appendingPathComponent("applications"), withIntermediateDirectories: true)
            try "[Desktop Entry]\nType=Application\nName=Fetcher\nIcon=fetcher\nExec=fetcher\n".write(
                to: data.appendingPathComponent("applications/\(Self.desktopID).desktop"), atomically: true, encoding: .utf8)
            bridge = try ChildProcess(
                "nsenter",
                network.enter(
                    network.client,
                    [try builtProduct("netactivity"), "--address", service.address, "bridge", "--only", sources] + options),
                environment: ["XDG_DATA_HOME": data.path, "XDG_DATA_DIRS": data.path])
            client = NetActivityClient(bus: .address(service.address), problems: { _ in })
            observation = client.observe { [seen] snapshot in
                seen.value.withLock { seen in
                    for activity in snapshot.activities {
                        // Keep the largest progress each showed.
                        if let known = seen[activity.id], known.completed >= activity.completed { continue }
                        seen[activity.id] = activity
                    }
                }
            }
            try waitUntil("the bridge to own its name") {
                (try? service.busctl(["status", "io.github.netactivity.Bridge"]))?.succeeded == true
            }
        }

        deinit {
            observation?.cancel()
            bridge.send(signal: SIGTERM)
            _ = try? bridge.waitForExit(timeout: .seconds(10))
            try? FileManager.default.removeItem(at: data)
        }

        /// Every activity shown since the setup, by id.
        var activities: [ActivityInfo] { seen.value.withLock { $0.values.sorted { $0.id < $1.id } } }

        /// Activities the service holds now.
        var live: [ActivityInfo] {
            get throws { try service.probe().activities() }
        }

        /// The desktop id of `showMarker()`'s transfer.
        static let markerID = "org.example.Marker"

        /// Runs a transfer the bridge must show, of another app, and waits until it shows: the
        /// event that shows an earlier transfer never did. The bridge reads every socket at each
        /// sample, so by the sample that begins the marker's activity it has read the earlier
        /// transfer's bytes and shown whatever it would.
        func showMarker() throws {
            let markerScope = try AppScope(desktopID: Self.markerID)
            let curl = try ChildProcess(
                "sh",
                markerScope.run(
                    ["nsenter"]
                        + network.enter(
                            network.client,
                            ["curl", "-sS", "-o", "/dev/null", PacingServer.url(bytes: 3_000_000, rate: 1_000_000)])))
            try waitUntil("the marker transfer to show", timeout: .seconds(10)) {
                activities.contains { $0.claimedApplication == Self.markerID }
            }
            _ = try curl.waitForExit(timeout: .seconds(20))
        }

        /// Every activity shown since the setup but the marker's.
        var activitiesButTheMarker: [ActivityInfo] { activities.filter { $0.claimedApplication != Self.markerID } }

        /// curl in the client namespace (run by `prefix`, such as `setpriv`), in the app scope
        /// unless `scoped` is false.
        func curl(_ arguments: [String], scoped: Bool = true, prefix: [String] = []) throws -> ChildProcess {
            let command = ["nsenter"] + network.enter(network.client, prefix + ["curl", "-sS", "-o", "/dev/null"] + arguments)
            if scoped { return try ChildProcess("sh", scope.run(command)) }
            return try ChildProcess(command[0], Array(command.dropFirst()))
        }
    }

    /// The activities a client saw, handed from its thread to the test's.
    final class SeenActivities: Sendable {
        let value = Locked<[UInt32: ActivityInfo]>([:])
    }

    // MARK: - Downloads and uploads

    @Test func aDownloadIsShownUnderItsApplicationAndEnds() throws {
        let setup = try Setup()
        let curl = try setup.curl([PacingServer.url(bytes: 4_000_000, rate: 800_000)])
        try waitUntil("an activity for the download", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == Setup.desktopID }
        }
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        try waitUntil("the activity to end after 5 s of quiet", timeout: .seconds(15)) { try setup.live.isEmpty }
        let shown = setup.activities
        #expect(shown.count == 1, "\(shown)")
        let activity = try #require(shown.first)
        #expect(activity.label == "Fetcher")
        #expect(activity.kind == "download")
        #expect(activity.icon == "fetcher")
        #expect(activity.total == 0)
        // Counted from its begin (within a few seconds of the first bytes) to the end.
        #expect(activity.completed >= 1_000_000 && activity.completed <= 4_200_000, "\(activity)")
        #expect(!shown.contains { $0.label == "Other traffic" })
    }

    @Test func bytesBeforeTheThresholdWasCrossedAreCounted() throws {
        let setup = try Setup()
        // 3 MB at once, before the bridge's counters wake it, then 1 MB a second for 3 s: at
        // least a second of it after the bridge's first dump, to cross the threshold.
        let size = 6_000_000
        let curl = try setup.curl([PacingServer.url(bytes: size, rate: 1_000_000, unpacedFirst: 3_000_000)])
        #expect(try curl.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        try waitUntil("the activity to end after 5 s of quiet", timeout: .seconds(15)) {
            try !setup.activities.isEmpty && setup.live.isEmpty
        }
        let activity = try #require(setup.activities.first)
        #expect(activity.completed >= UInt64(Double(size) * 0.95), "from the first byte: \(activity.completed) of \(size)")
        #expect(activity.completed <= UInt64(size) + 100_000, "each byte once: \(activity.completed) of \(size)")
    }

    @Test func anIPv6DownloadIsShownToo() throws {
        let setup = try Setup()
        let curl = try setup.curl([PacingServer.url(bytes: 3_000_000, rate: 1_000_000, ipv6: true)])
        try waitUntil("an activity for the IPv6 download", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == Setup.desktopID && $0.kind == "download" }
        }
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        #expect(!setup.activities.contains { $0.label == "Other traffic" }, "\(setup.activities)")
    }

    @Test func anUploadIsShownAsAnUpload() throws {
        let setup = try Setup()
        let file = setup.data.appendingPathComponent("upload")
        try Data(count: 3_000_000).write(to: file)
        let curl = try setup.curl(["--limit-rate", "700K", "-T", file.path, "http://\(TrafficNetwork.serverAddress):8080/upload"])
        try waitUntil("an activity for the upload", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == Setup.desktopID }
        }
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        let activity = try #require(setup.activities.first)
        #expect(activity.kind == "upload" && activity.label == "Fetcher", "\(activity)")
    }

    @Test func aTrickleBelowTheThresholdShowsNothing() throws {
        let setup = try Setup()
        // 60 kB a second: 120 kB within 2 s, under the 256 kB threshold, over a tenth of it.
        let curl = try setup.curl([PacingServer.url(bytes: 360_000, rate: 60_000)])
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        try setup.showMarker()
        #expect(setup.activitiesButTheMarker.isEmpty, "\(setup.activities)")
    }

    @Test func theThresholdIsTheUsers() throws {
        let setup = try Setup(options: ["--traffic-threshold", "50000"])
        let curl = try setup.curl([PacingServer.url(bytes: 360_000, rate: 60_000)])
        try waitUntil("an activity above a 50 kB threshold", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == Setup.desktopID }
        }
        _ = try curl.waitForExit(timeout: .seconds(20))
    }

    // MARK: - Cost

    @Test func whileNothingMovesItWakesEveryTwoSeconds() throws {
        let setup = try Setup()
        Thread.sleep(forTimeInterval: 0.5)
        let woken = try wakeUps(of: setup.bridge.pid, over: 6)
        let switches = woken.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        // 3 timer turns in 6 s, a switch or two each (the poll, the read); 1 a second would be 6+.
        #expect(switches <= 6, "\(woken)")
        #expect(setup.activities.isEmpty)
    }

    // MARK: - Who is never shown, or not twice

    @Test func anotherUsersTransferNeverShows() throws {
        let setup = try Setup()
        let curl = try setup.curl(
            [PacingServer.url(bytes: 3_000_000, rate: 1_000_000)], scoped: false,
            prefix: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        try setup.showMarker()
        #expect(setup.activitiesButTheMarker.isEmpty, "not as the app, not as Other traffic: \(setup.activities)")
    }

    @Test func netactivityRunAroundATransferIsOneActivity() throws {
        let setup = try Setup()
        let run = try ChildProcess(
            "sh",
            setup.scope.run(
                [try builtProduct("netactivity"), "--address", setup.service.address, "run", "--label", "Fetching", "--",
                 "nsenter"]
                    + setup.network.enter(
                        setup.network.client,
                        ["curl", "-sS", "-o", "/dev/null", PacingServer.url(bytes: 4_000_000, rate: 1_000_000)])))
        let result = try run.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        // The run's activity ends as curl exits; the bridge must not begin one as it does.
        try setup.showMarker()
        #expect(setup.activitiesButTheMarker.map(\.label) == ["Fetching"], "\(setup.activities)")
    }

    @Test func ignoredApplicationsNeverShow() throws {
        let setup = try Setup(options: ["--traffic-ignore", "org.example.Other,\(Setup.desktopID)"])
        let curl = try setup.curl([PacingServer.url(bytes: 3_000_000, rate: 1_000_000)])
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        try setup.showMarker()
        #expect(setup.activitiesButTheMarker.isEmpty, "\(setup.activities)")
    }

    // MARK: - UDP

    @Test func aQuicSenderTakesTheBytesTcpDoesNotExplain() throws {
        let setup = try Setup()
        let sender = try ChildProcess(
            "sh",
            setup.scope.run(
                ["nsenter"]
                    + setup.network.enter(
                        setup.network.client,
                        ["python3", "-c", PacingServer.udpSender, TrafficNetwork.serverAddress, "400000", "4"])))
        try waitUntil("an activity for the UDP sender", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == Setup.desktopID }
        }
        _ = try sender.waitForExit(timeout: .seconds(10))
        let activity = try #require(setup.activities.first)
        #expect(activity.kind == "upload", "\(activity)")
    }
}
