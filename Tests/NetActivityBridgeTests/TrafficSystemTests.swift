import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import StackTestSupport
import PrivateBusLauncher
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The system side (`netactivity bridge --system`) and the user side's cgroup rule against real
/// transfers: curl in the client namespace of `TrafficNetwork`, in cgroups the test makes and
/// names as systemd does (`system.slice/UNIT.service`, `user.slice/user-UID.slice/session-N.scope`),
/// each side's bridge reporting to its own service on a private bus, a unit file the test
/// writes on the unit search path (`SYSTEMD_UNIT_PATH`). Traffic only ever goes between the
/// two namespaces.
@Suite(
    .system, .tags(.system), .timeLimit(.minutes(5)),
    .serialized,
    .enabled(if: TrafficNetwork.unavailable == nil, Comment(rawValue: TrafficNetwork.unavailable ?? "")))
struct TrafficSystemTests {
    /// One side's service and bridge, and every activity the service ever showed, with each
    /// progress seen.
    final class Side {
        let service: ServiceDaemon
        let bridge: ChildProcess
        let client: NetActivityClient
        private let seen = Locked<[UInt32: [ActivityInfo]]>([:])
        private var observation: Observation?

        /// The system side: `netactivity --system --system-address BUS bridge`, its units'
        /// files in `units`; with `sandboxed`, in the sandbox its unit gives it, as far as it
        /// bears on what the bridge reads (`Side.unitSandbox`).
        static func system(in network: TrafficNetwork, units: URL, sandboxed: Bool = false) throws -> Side {
            // The sandboxed bridge is its own user, as the unit's is: a bus every user reaches.
            let service =
                sandboxed
                ? try ServiceDaemon(ServiceDaemon.immediate + ["--system"], on: try PrivateBus.everyUsers())
                : try ServiceDaemon(ServiceDaemon.immediate + ["--system"])
            return try Side(
                service: service, network: network,
                command: ["--system", "--system-address", service.address, "bridge"],
                prefix: sandboxed ? Self.unitSandbox : [],
                environment: ["SYSTEMD_UNIT_PATH": units.path])
        }

        /// What `dbus/netactivity-bridge-system.service.in` does to the bridge's view, without
        /// systemd: its own mount namespace with /proc mounted `subset=pid,hidepid=invisible`
        /// (ProcSubset=pid, ProtectProc=invisible); a user of its own (User=netactivity-bridge:
        /// here `daemon`, which every Debian has); a user namespace mapping that user alone
        /// (PrivateUsers=yes); no capabilities and none to gain (CapabilityBoundingSet=,
        /// NoNewPrivileges=yes).
        static let unitSandbox = [
            "unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            "mount -t proc -o subset=pid,hidepid=invisible proc /proc && exec setpriv --reuid=daemon --regid=daemon "
                + "--clear-groups unshare --user --map-current-user -- "
                + "setpriv --no-new-privs --bounding-set=-all --inh-caps=-all \"$@\"",
            "sh",
        ]

        /// A user's side: `netactivity --address BUS bridge --only traffic`, run as `uid` (root
        /// by default) on a bus every user may connect to.
        static func user(in network: TrafficNetwork, uid: UInt32? = nil) throws -> Side {
            let service = try ServiceDaemon(ServiceDaemon.immediate, on: try PrivateBus.everyUsers())
            return try Side(
                service: service, network: network,
                command: ["--address", service.address, "bridge", "--only", "traffic"],
                prefix: uid.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? [])
        }

        private init(
            service: ServiceDaemon, network: TrafficNetwork, command: [String], prefix: [String] = [],
            environment: [String: String] = [:]
        ) throws {
            self.service = service
            bridge = try ChildProcess(
                "nsenter", network.enter(network.client, prefix + [try builtProduct("netactivity")] + command),
                environment: environment)
            client = NetActivityClient(bus: .address(service.address), problems: { _ in })
            observation = client.observe { [seen] snapshot in
                seen.withLock { seen in
                    for activity in snapshot.activities where seen[activity.id]?.last != activity {
                        seen[activity.id, default: []].append(activity)
                    }
                }
            }
            try waitUntil("the bridge to own its name: \(bridge.stderrText)") {
                (try? service.busctl(["status", "io.github.netactivity.Bridge"]))?.succeeded == true
            }
        }

        deinit {
            observation?.cancel()
            bridge.send(signal: SIGTERM)
            _ = try? bridge.waitForExit(timeout: .seconds(10))
        }

        /// Every activity shown, by id, as it was last seen.
        var activities: [ActivityInfo] {
            seen.withLock { seen in seen.keys.sorted().compactMap { seen[$0]?.last } }
        }

        /// Each activity's states in the order seen.
        var histories: [[ActivityInfo]] { seen.withLock { seen in seen.keys.sorted().compactMap { seen[$0] } } }

        var live: [ActivityInfo] {
            get throws { try service.probe().activities() }
        }
    }

    /// A system unit made by the test: its cgroup under `system.slice` and its unit file.
    final class TestUnit {
        let name: String
        let cgroup: SystemdCgroup
        static let description = "NetActivity test fetcher"

        init(_ name: String, in units: URL) throws {
            self.name = name
            try "[Unit]\nDescription=\(Self.description)\n\n[Service]\nExecStart=/bin/true\n".write(
                to: units.appendingPathComponent(name), atomically: true, encoding: .utf8)
            cgroup = try SystemdCgroup(["system.slice", name])
        }
    }

    /// curl in the client namespace, in `cgroup`, as `uid` (root's own when nil).
    static func curl(_ url: String, in cgroup: SystemdCgroup, network: TrafficNetwork, uid: UInt32? = nil) throws -> ChildProcess {
        let user = uid.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        return try ChildProcess(
            "sh", cgroup.run(["nsenter"] + network.enter(network.client, user + ["curl", "-sS", "-o", "/dev/null", url])))
    }

    static func unitsDirectory() throws -> URL {
        let units = FileManager.default.temporaryDirectory.appendingPathComponent("na-units-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
        return units
    }

    /// A unit name no other test run uses.
    static func unitName(_ base: String) -> String {
        "na-\(base)-\(getpid())-\(Int.random(in: 1000...9999)).service"
    }

    // MARK: - The system side

    @Test func aSystemUsersDownloadInAUnitShowsOnTheSystemBusUnderItsDescription() throws {
        let network = try TrafficNetwork()
        let server = try PacingServer(in: network)
        let units = try Self.unitsDirectory()
        defer { try? FileManager.default.removeItem(at: units) }
        let unit = try TestUnit(Self.unitName("fetch"), in: units)
        let system = try Side.system(in: network, units: units, sandboxed: true)
        // 2 MB at once, before the bridge follows any socket, then 1 MB a second.
        let size = 5_000_000
        let curl = try Self.curl(
            PacingServer.url(bytes: size, rate: 1_000_000, unpacedFirst: 2_000_000), in: unit.cgroup, network: network,
            uid: 65534)
        try waitUntil("an activity for the unit on the system bus", timeout: .seconds(10)) {
            system.activities.contains { $0.claimedApplication == unit.name }
        }
        let result = try curl.waitForExit(timeout: .seconds(20))
        #expect(result.exitStatus == 0, "\(result)")
        try waitUntil("the activity to end after 5 s of quiet", timeout: .seconds(15)) { try system.live.isEmpty }
        let history = try #require(system.histories.first { $0.last?.claimedApplication == unit.name })
        let activity = try #require(history.last)
        #expect(activity.label == TestUnit.description, "\(activity)")
        #expect(activity.kind == "download")
        let progress = history.map(\.completed)
        #expect(progress.count >= 2 && progress == progress.sorted(), "rising bytes: \(progress)")
        #expect(activity.completed >= UInt64(Double(size) * 0.95), "from the first byte: \(activity.completed) of \(size)")
        #expect(system.activities.count == 1, "\(system.activities)")
        withExtendedLifetime(server) {}
    }

    @Test func aSystemServicesTransferIsNotTheUsersEvenWithTheUsersUid() throws {
        let network = try TrafficNetwork()
        let server = try PacingServer(in: network)
        let units = try Self.unitsDirectory()
        defer { try? FileManager.default.removeItem(at: units) }
        let unit = try TestUnit(Self.unitName("service"), in: units)
        let system = try Side.system(in: network, units: units)
        // The user side runs as root, and so does curl: only the cgroup tells them apart.
        let user = try Side.user(in: network)
        let curl = try Self.curl(PacingServer.url(bytes: 3_000_000, rate: 1_000_000), in: unit.cgroup, network: network)
        #expect(try curl.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        // The system side saw it: the user side, sampling the same sockets, would have by now.
        try waitUntil("the system side's activity to end", timeout: .seconds(15)) {
            try !system.activities.isEmpty && system.live.isEmpty
        }
        #expect(system.activities.map(\.claimedApplication) == [unit.name])
        #expect(user.activities.isEmpty, "\(user.activities)")
        withExtendedLifetime(server) {}
    }

    @Test func packageKitsTrafficIsNotShownByDefault() throws {
        let network = try TrafficNetwork()
        let server = try PacingServer(in: network)
        let units = try Self.unitsDirectory()
        defer { try? FileManager.default.removeItem(at: units) }
        let packagekit = try TestUnit("packagekit.service", in: units)
        let witness = try TestUnit(Self.unitName("witness"), in: units)
        let system = try Side.system(in: network, units: units)
        let url = PacingServer.url(bytes: 3_000_000, rate: 1_000_000)
        let first = try Self.curl(url, in: packagekit.cgroup, network: network)
        let second = try Self.curl(url, in: witness.cgroup, network: network)
        #expect(try first.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        #expect(try second.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        try waitUntil("the witness's activity to end", timeout: .seconds(15)) {
            try !system.activities.isEmpty && system.live.isEmpty
        }
        #expect(system.activities.map(\.claimedApplication) == [witness.name], "\(system.activities)")
        withExtendedLifetime(server) {}
    }

    // MARK: - The user side

    @Test func rootsDownloadInTheUsersSessionIsTheUsersAndNotTheSystems() throws {
        let network = try TrafficNetwork()
        let server = try PacingServer(in: network)
        let units = try Self.unitsDirectory()
        defer { try? FileManager.default.removeItem(at: units) }
        let session = try SystemdCgroup(["user.slice", "user-1000.slice", "session-\(getpid() % 10_000 + 90_000).scope"])
        let system = try Side.system(in: network, units: units)
        let user = try Side.user(in: network, uid: 1000)
        // `sudo curl`: root's process in uid 1000's session; the bridge, uid 1000, may not read its descriptors.
        let curl = try Self.curl(PacingServer.url(bytes: 4_000_000, rate: 1_000_000), in: session, network: network)
        try waitUntil("an activity on the user's bus", timeout: .seconds(10)) { !user.activities.isEmpty }
        #expect(try curl.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        try waitUntil("the user's activity to end", timeout: .seconds(15)) { try user.live.isEmpty }
        let activity = try #require(user.activities.first)
        #expect(activity.label == "curl" && activity.claimedApplication == "curl", "the program's: \(activity)")
        #expect(user.activities.count == 1, "\(user.activities)")
        #expect(system.activities.isEmpty, "\(system.activities)")
        withExtendedLifetime(server) {}
    }

    @Test func anotherUsersSliceShowsNowhere() throws {
        let network = try TrafficNetwork()
        let server = try PacingServer(in: network)
        let units = try Self.unitsDirectory()
        defer { try? FileManager.default.removeItem(at: units) }
        let other = try SystemdCgroup(["user.slice", "user-4242.slice", "session-\(getpid() % 10_000 + 80_000).scope"])
        let witness = try TestUnit(Self.unitName("witness"), in: units)
        let system = try Side.system(in: network, units: units)
        // Root's bridge and root's curl: only the slice says whose it is.
        let user = try Side.user(in: network)
        let url = PacingServer.url(bytes: 3_000_000, rate: 1_000_000)
        let foreign = try Self.curl(url, in: other, network: network)
        let seen = try Self.curl(url, in: witness.cgroup, network: network)
        #expect(try foreign.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        #expect(try seen.waitForExit(timeout: .seconds(20)).exitStatus == 0)
        try waitUntil("the witness's activity to end", timeout: .seconds(15)) {
            try !system.activities.isEmpty && system.live.isEmpty
        }
        #expect(system.activities.map(\.claimedApplication) == [witness.name], "\(system.activities)")
        #expect(user.activities.isEmpty, "\(user.activities)")
        withExtendedLifetime(server) {}
    }
}

extension PrivateBus {
    /// A private session-type bus every user may connect to (as the system bus lets them):
    /// a bridge that drops to another uid reports to it.
    static func everyUsers() throws -> PrivateBus {
        try PrivateBus { directory in
            chmod(directory, 0o711)
            // Without <keep_umask/> the daemon makes its socket writable by everyone.
            return privateBusConfiguration(listen: "unix:dir=\(directory)")
                .replacingOccurrences(of: "<keep_umask/>", with: "")
                .replacingOccurrences(of: "<policy context=\"default\">", with: "<policy context=\"default\">\n    <allow user=\"*\"/>")
        }
    }
}
