import BusTestSupport
import Locking
@testable import NetActivityBridge
import Testing

/// The traffic source's decisions on made-up samples and a made-up clock: when sockets are
/// followed, when an application begins and ends, what it is credited, and who is never shown.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrafficTrackerTests {
    final class Owners: SocketOwnerLookup {
        var byCookie: [UInt64: SocketOwner] = [:]
        var asked: [UInt64] = []
        /// The cgroup path of each cgroup id: none by default, as on a machine without cgroup v2.
        var paths: [UInt64: String] = [:]
        func cgroupPaths(of ids: Set<UInt64>) -> [UInt64: String] { paths.filter { ids.contains($0.key) } }
        func owners(of sockets: [SocketRecord]) -> [UInt64: SocketOwner] {
            asked += sockets.map(\.cookie)
            let cookies = Set(sockets.map(\.cookie))
            return byCookie.filter { cookies.contains($0.key) }
        }
    }

    static let fetcher = SocketOwner(
        application: "org.example.Fetcher", desktopID: "org.example.Fetcher", program: "curl", label: "Fetcher",
        icon: "fetcher", cgroup: "/app-gnome-org.example.Fetcher-4242.scope", processes: [4242, 100])
    static let uploader = SocketOwner(application: "rsync", program: "rsync", label: "rsync", processes: [77])

    /// A tracker at 0 s with sockets followed and baselined: interfaces and one socket per
    /// cookie at 0 bytes.
    struct Harness {
        let owners = Owners()
        let tracker: TrafficTracker
        var now: Duration = .zero
        var interface = InterfaceCounters.Bytes(received: 0, sent: 0)
        var sockets: [UInt64: SocketRecord] = [:]
        var reported: [ReportedActivity] = []
        var udp: [SocketRecord] = []

        init(settings: TrafficSettings = TrafficSettings(uid: 1000)) {
            tracker = TrafficTracker(settings: settings, lookup: owners)
        }

        /// Opens socket `cookie` of `uid` owned by `owner`, in `cgroup` when given, having moved
        /// `received` bytes already.
        mutating func open(
            _ cookie: UInt64, uid: UInt32 = 1000, owner: SocketOwner? = nil, cgroup: String? = nil, received: UInt64 = 0
        ) {
            sockets[cookie] = SocketRecord(
                cookie: cookie, uid: uid, inode: UInt32(cookie), bytesReceived: received, bytesAcked: 0,
                cgroupID: cgroup.map { _ in 1_000 + cookie })
            if let cgroup { owners.paths[1_000 + cookie] = cgroup }
            if let owner { owners.byCookie[cookie] = owner }
        }

        /// Socket `cookie` moves `received`/`sent` bytes; the interface carries them (and
        /// `extra` more no TCP socket explains).
        mutating func move(_ cookie: UInt64, received: UInt64 = 0, sent: UInt64 = 0) {
            sockets[cookie]?.bytesReceived? += received
            sockets[cookie]?.bytesAcked? += sent
            interface.received += received
            interface.sent += sent
        }

        /// How each sample with sockets read them, as the source would: a full dump, lookups,
        /// or lookups and then the full dump their unexplained bytes asked for.
        var readings: [Reading] = []
        enum Reading: Equatable { case dump, lookups(Int), lookupsThenDump(Int) }

        /// One sample `step` later; with sockets while the tracker follows them, read the way
        /// the tracker asks.
        mutating func tick(_ step: Duration = .seconds(1), destroyed: [SocketRecord] = []) -> [TrafficEvent] {
            now += step
            var sample = TrafficSample(interfaces: ["eth0": interface])
            if tracker.followsSockets {
                let all = sockets.values.sorted { $0.cookie < $1.cookie }
                if let known = tracker.socketsToLookUp {
                    let cookies = Set(known.map(\.cookie))
                    let dumped = Locked(0)
                    sample.sockets = .init(
                        tcp: all.filter { cookies.contains($0.cookie) }, lookedUp: cookies,
                        readAllTCP: { dumped.withLock { $0 += 1 }; return all },
                        destroyed: destroyed, udp: udp, reported: reported)
                    let events = tracker.take(sample, at: now)
                    readings.append(dumped.withLock { $0 } > 0 ? .lookupsThenDump(known.count) : .lookups(known.count))
                    return events
                }
                readings.append(.dump)
                sample.sockets = .init(tcp: all, destroyed: destroyed, udp: udp, reported: reported)
            }
            return tracker.take(sample, at: now)
        }

        /// Starts following sockets: counters show a burst, then the baseline dump.
        mutating func follow() {
            _ = tick(.seconds(2))
            interface.received += 1_000_000
            _ = tick(.seconds(2))
            #expect(tracker.followsSockets)
            _ = tick()
        }

        /// Ticks `count` times, `cookie` moving `perSecond` each, collecting every event.
        mutating func run(_ count: Int, _ cookie: UInt64, received perSecond: UInt64 = 0, sent: UInt64 = 0) -> [TrafficEvent] {
            var events: [TrafficEvent] = []
            for _ in 0..<count {
                move(cookie, received: perSecond, sent: sent)
                events += tick()
            }
            return events
        }
    }

    static func began(_ events: [TrafficEvent]) -> [ObservedActivity] {
        events.compactMap { if case .began(let activity) = $0 { activity } else { nil } }
    }

    static func ended(_ events: [TrafficEvent]) -> [String] {
        events.compactMap { if case .ended(let key) = $0 { key } else { nil } }
    }

    // MARK: - Following sockets

    @Test func quietInterfacesAreReadAloneEveryTwoSeconds() {
        var harness = Harness()
        for _ in 0..<10 {
            harness.interface.received += 20_000
            #expect(harness.tick(.seconds(2)).isEmpty)
            #expect(!harness.tracker.followsSockets)
            #expect(harness.tracker.nextInterval == .seconds(2))
        }
        #expect(harness.owners.asked.isEmpty)
    }

    @Test func aTenthOfTheThresholdStartsFollowingAndTenQuietSecondsStop() {
        var harness = Harness()
        _ = harness.tick(.seconds(2))
        harness.interface.received += 30_000  // above 26,214 within 2 s
        _ = harness.tick(.seconds(2))
        #expect(harness.tracker.followsSockets)
        #expect(harness.tracker.nextInterval == .seconds(1))
        for _ in 0..<9 { _ = harness.tick() }
        #expect(harness.tracker.followsSockets, "9 s quiet")
        _ = harness.tick()
        #expect(!harness.tracker.followsSockets, "10 s without a tenth of the threshold")
    }

    // MARK: - Begin, progress, end

    @Test func aDownloadBeginsWithinTwoSecondsAndEndsAfterFiveQuiet() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        var events = harness.run(1, 1, received: 100_000)
        #expect(Self.began(events).isEmpty, "100 kB is below 256 kB")
        events = harness.run(1, 1, received: 200_000)
        let activity = try #require(Self.began(events).first)
        #expect(activity.key == "org.example.Fetcher" && activity.label == "Fetcher")
        #expect(activity.application == "org.example.Fetcher" && activity.icon == "fetcher")
        #expect(activity.download && activity.completed == 300_000)
        events = harness.run(3, 1, received: 200_000)
        #expect(events.last == .progressed(key: "org.example.Fetcher", completed: 900_000))
        #expect(Self.ended(events).isEmpty)
        // A tenth of the threshold is 26,214 within 2 s: 10 kB a second is quiet.
        events = harness.run(6, 1, received: 10_000)
        #expect(Self.ended(events).isEmpty, "quiet for 5 s only after the window empties")
        events = harness.run(1, 1, received: 10_000)
        #expect(Self.ended(events) == ["org.example.Fetcher"])
        #expect(harness.owners.asked == [1], "the owner is looked up once")
    }

    @Test func anUploadIsAnUploadAndCountsWhatWentOut() throws {
        var harness = Harness()
        harness.open(2, owner: Self.uploader)
        harness.follow()
        let events = harness.run(1, 2, received: 1_000, sent: 300_000)
        let activity = try #require(Self.began(events).first)
        #expect(!activity.download && activity.completed == 300_000 && activity.label == "rsync")
    }

    @Test func aTrickleBelowTheThresholdNeverShows() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        #expect(Self.began(harness.run(30, 1, received: 100_000)).isEmpty)
    }

    @Test func aThresholdOfOwnChoosing() {
        var harness = Harness(settings: TrafficSettings(threshold: 10_000, uid: 1000))
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        #expect(Self.began(harness.run(1, 1, received: 12_000)).count == 1)
    }

    @Test func ignoredApplicationsNeverShow() {
        for ignored in ["org.example.Fetcher", "curl"] {
            var harness = Harness(settings: TrafficSettings(ignored: [ignored], uid: 1000))
            harness.open(1, owner: Self.fetcher)
            harness.follow()
            #expect(Self.began(harness.run(5, 1, received: 1_000_000)).isEmpty, "\(ignored)")
        }
    }

    @Test func socketsOfOneApplicationAddUp() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.open(2, owner: Self.fetcher)
        harness.follow()
        harness.move(1, received: 150_000)
        harness.move(2, received: 150_000)
        #expect(Self.began(harness.tick()).first?.completed == 300_000)
    }

    @Test func aSocketOpenedAfterTheBaselineCountsWhole() {
        var harness = Harness()
        harness.follow()
        harness.open(5, owner: Self.fetcher)
        harness.move(5, received: 400_000)
        #expect(Self.began(harness.tick()).first?.completed == 400_000)
    }

    @Test func theBaselineDumpCountsNothing() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.move(1, received: 50_000_000)  // before the bridge looked: history, not a transfer
        harness.follow()
        #expect(Self.began(harness.run(5, 1)).isEmpty)
    }

    // MARK: - Who is shown

    @Test func anotherUsersTrafficIsNeverShownYetExplainsTheInterface() {
        var harness = Harness()
        harness.open(1, uid: 65534, owner: Self.fetcher)
        harness.follow()
        let events = harness.run(5, 1, received: 1_000_000)
        #expect(events.isEmpty, "\(events)")
        #expect(harness.owners.asked.isEmpty, "another user's socket is not even looked up")
    }

    @Test func rootsSocketInTheUsersOwnSessionIsTheUsers() throws {
        var harness = Harness()
        harness.open(1, uid: 0, owner: Self.fetcher, cgroup: "/user.slice/user-1000.slice/session-3.scope")
        harness.follow()
        let activity = try #require(Self.began(harness.run(1, 1, received: 400_000)).first)
        #expect(activity.label == "Fetcher")
    }

    @Test func systemServicesAndOtherUsersSlicesAreNotTheUsers() {
        for (uid, cgroup) in [
            (1000, "/system.slice/apt-daily.service"), (1000, "/user.slice/user-1001.slice/session-4.scope"),
            (0, "/system.slice/system-foo.slice/foo@1.service"), (0, "/machine.slice/libpod-1.scope"),
        ] as [(UInt32, String)] {
            var harness = Harness()
            harness.open(1, uid: uid, owner: Self.fetcher, cgroup: cgroup)
            harness.follow()
            #expect(harness.run(4, 1, received: 1_000_000).filter { if case .began = $0 { true } else { false } }.isEmpty, "\(cgroup)")
            #expect(harness.owners.asked.isEmpty, "\(cgroup): not even looked up")
        }
    }

    @Test func theSystemSideCountsSystemServicesOfAnyUid() throws {
        let unit = SocketOwner(application: "apt-daily.service", label: "Daily apt download activities")
        for (cgroup, shown) in [
            ("/system.slice/apt-daily.service", true), ("/user.slice/user-1000.slice/session-3.scope", false),
            ("/", false),
        ] {
            var harness = Harness(settings: TrafficSettings(uid: 0, systemSide: true))
            harness.open(1, uid: 42, owner: unit, cgroup: cgroup)
            harness.follow()
            let began = Self.began(harness.run(2, 1, received: 400_000))
            #expect(began.map(\.label) == (shown ? ["Daily apt download activities"] : []), "\(cgroup)")
        }
    }

    @Test func theSystemSideShowsNoOtherTraffic() {
        var harness = Harness(settings: TrafficSettings(uid: 0, systemSide: true))
        harness.follow()
        var events: [TrafficEvent] = []
        for _ in 0..<5 {
            harness.interface.received += 1_000_000  // QUIC of a user's browser, say
            events += harness.tick()
        }
        #expect(events.isEmpty, "\(events)")
    }

    @Test func whatASocketMovedBeforeItWasFollowedCounts() throws {
        var harness = Harness()
        // 20 MB arrived before the interfaces' counters woke the tracker.
        harness.open(1, owner: Self.fetcher, received: 20_000_000)
        harness.follow()
        let activity = try #require(Self.began(harness.run(1, 1, received: 400_000)).first)
        #expect(activity.completed == 20_400_000)
        let events = harness.run(2, 1, received: 400_000)
        #expect(events.last == .progressed(key: "org.example.Fetcher", completed: 21_200_000), "counted once: \(events)")
    }

    @Test func aSlowStartCountsFromItsFirstByte() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        // 100 kB a second for 5 s: below 256 kB within 2 s, above a tenth of it.
        #expect(Self.began(harness.run(5, 1, received: 100_000)).isEmpty)
        let activity = try #require(Self.began(harness.run(1, 1, received: 300_000)).first)
        #expect(activity.completed == 800_000)
    }

    @Test func aTrickleLongStoppedIsNoPartOfTheNextTransfer() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(3, 1, received: 100_000)
        _ = harness.run(8, 1, received: 1)  // quiet for more than 5 s
        let activity = try #require(Self.began(harness.run(1, 1, received: 300_000)).first)
        #expect(activity.completed < 310_000, "\(activity)")
    }

    @Test func loopbackNeverCounts() {
        var harness = Harness()
        harness.follow()
        harness.sockets[9] = SocketRecord(
            cookie: 9, localAddress: [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12),
            remoteAddress: [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12), uid: 1000, bytesReceived: 0, bytesAcked: 0)
        harness.owners.byCookie[9] = Self.fetcher
        for _ in 0..<5 {
            harness.sockets[9]?.bytesReceived? += 1_000_000  // and no interface counts it
            #expect(harness.tick().isEmpty)
        }
    }

    @Test func aClosingSocketsLastBytesCount() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(1, 1, received: 100_000)
        // It moves 200 kB more and closes before the next dump: only the broadcast tells.
        let removed = harness.sockets.removeValue(forKey: 1)
        var last = try #require(removed)
        last.bytesReceived = 300_000
        last.uid = 0
        last.inode = 0
        harness.interface.received += 200_000
        let events = harness.tick(destroyed: [last])
        #expect(Self.began(events).first?.completed == 300_000)
        #expect(!events.contains { if case .began(let a) = $0 { a.label == "Other traffic" } else { false } })
    }

    @Test func aSocketDumpedThenDestroyedCountsOnce() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(1, 1, received: 200_000)
        // In this sample's dump at 300 kB, and its broadcast says 350 kB: 150 kB in all.
        harness.move(1, received: 100_000)
        var last = try #require(harness.sockets[1])
        last.bytesReceived = 350_000
        harness.interface.received += 50_000
        let events = harness.tick(destroyed: [last])
        #expect(Self.began(events).first?.completed == 350_000, "\(events)")
        _ = harness.sockets.removeValue(forKey: 1)
        harness.interface.received += 300_000  // UDP, say: not the closed socket's
        #expect(harness.tick().contains { if case .began(let a) = $0 { a.label == "Other traffic" } else { false } })
    }

    @Test func aSocketGoneWithoutABroadcastTakesWhatNothingElseExplains() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(1, 1, received: 200_000)
        _ = harness.sockets.removeValue(forKey: 1)
        harness.interface.received += 150_000  // its last bytes: at most what it moved last period
        let events = harness.tick()
        #expect(Self.began(events).first?.completed == 350_000, "\(events)")
        #expect(Self.began(events).count == 1, "no Other traffic")
    }

    @Test func anotherUsersSocketGoneAfterOneDumpLeavesNoOtherTraffic() {
        var harness = Harness()
        harness.open(1, uid: 65534, owner: Self.fetcher)
        harness.move(1, received: 2_000_000)
        harness.follow()  // the baseline sees it once
        _ = harness.sockets.removeValue(forKey: 1)
        harness.interface.received += 1_000_000  // its last second, and it is gone
        #expect(harness.tick().isEmpty)
    }

    @Test func anIdleSocketGoneTakesNothing() {
        var harness = Harness()
        harness.open(1, owner: Self.uploader)
        harness.follow()
        _ = harness.run(2, 1)  // measured, idle
        _ = harness.sockets.removeValue(forKey: 1)
        harness.interface.received += 400_000
        #expect(Self.began(harness.tick()).map(\.label) == ["Other traffic"])
    }

    @Test func aSocketWhoseOwnerIsGoneIsNobodys() {
        var harness = Harness()
        harness.open(1)  // no owner found: the process exited between dump and /proc
        harness.follow()
        #expect(harness.run(5, 1, received: 1_000_000).isEmpty)
    }

    // MARK: - Lookups between dumps

    @Test func aTransferIsFollowedByLookupsWithAFullDumpEveryFifthSample() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.open(2, uid: 65534)  // idle, another user's: never looked up
        harness.follow()
        harness.readings = []
        let events = harness.run(10, 1, received: 1_000_000)
        #expect(harness.readings.first == .lookups(2), "the baseline's sockets once more: measured before they may vanish")
        #expect(Array(harness.readings.dropFirst()) == [.lookups(1), .lookups(1), .lookups(1), .dump, .lookups(1), .lookups(1), .lookups(1), .lookups(1), .dump])
        let began = try #require(Self.began(events).first)
        let progressed = events.compactMap { if case .progressed(_, let completed) = $0 { completed } else { nil } }
        #expect(began.completed + 1_000_000 * UInt64(progressed.count) == 10_000_000, "every byte once: \(events)")
    }

    @Test func aSocketOpenedBetweenDumpsIsDumpedForAtOnce() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(3, 1, received: 1_000_000)
        harness.readings = []
        harness.open(2, owner: Self.uploader)
        harness.move(1, received: 1_000_000)
        harness.move(2, sent: 600_000)
        let events = harness.tick()
        #expect(harness.readings == [.lookupsThenDump(1)])
        #expect(Self.began(events).first?.key == "rsync" && Self.began(events).first?.completed == 600_000, "\(events)")
        #expect(Self.began(events).count == 1, "no Other traffic")
    }

    @Test func aTransferWithinABusierOnesHeaderAllowanceIsFoundByTheNextDump() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(3, 1, received: 100_000_000)
        harness.open(2, owner: Self.uploader)
        var events: [TrafficEvent] = []
        for _ in 0..<5 {
            harness.move(1, received: 100_000_000)
            harness.move(2, sent: 1_000_000)  // 1 %: hidden in the 5 % allowance
            events += harness.tick()
        }
        let uploader = try #require(Self.began(events).first { $0.key == "rsync" })
        #expect(uploader.completed >= 2_000_000, "what it moved before the dump counts too: \(events)")
        #expect(!Self.began(events).contains { $0.label == "Other traffic" })
    }

    @Test func bytesADumpFoundNoTcpsAskForNoMoreDumpsUntilTheNextRegularOne() throws {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        harness.udp = [SocketRecord(cookie: 30, remotePort: 443, uid: 1000, inode: 30)]
        harness.owners.byCookie[30] = Self.uploader
        harness.readings = []
        var events: [TrafficEvent] = []
        for _ in 0..<6 {
            harness.move(1, received: 1_000_000)
            harness.interface.received += 800_000  // QUIC
            events += harness.tick()
        }
        #expect(harness.readings == [.lookupsThenDump(1), .lookups(1), .lookups(1), .lookups(1), .lookups(1), .dump])
        #expect(Set(Self.began(events).map(\.key)) == ["org.example.Fetcher", "rsync"])
    }

    @Test func tooManyMovingSocketsAreDumped() {
        var harness = Harness()
        harness.follow()
        for cookie in 1...300 as ClosedRange<UInt64> { harness.open(cookie) }
        harness.readings = []
        for _ in 0..<3 {
            for cookie in 1...300 as ClosedRange<UInt64> { harness.move(cookie, received: 1_000) }
            _ = harness.tick()
        }
        #expect(harness.readings == [.lookupsThenDump(0), .dump, .dump])
    }

    // MARK: - Unexplained bytes: UDP

    @Test func bytesNoSocketExplainsAreOtherTraffic() throws {
        var harness = Harness()
        harness.follow()
        harness.interface.received += 400_000
        let activity = try #require(Self.began(harness.tick()).first)
        #expect(activity.label == "Other traffic" && activity.application == nil && activity.download)
    }

    @Test func headersWithinTheAllowanceAreNoOtherTraffic() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        var events: [TrafficEvent] = []
        for _ in 0..<5 {
            harness.move(1, received: 1_000_000)
            harness.interface.received += 40_000  // 4 % headers
            events += harness.tick()
        }
        #expect(Self.began(events).map(\.key) == ["org.example.Fetcher"])
    }

    @Test func theOneQuicApplicationTakesTheUnexplainedBytes() throws {
        var harness = Harness()
        harness.follow()
        harness.udp = [SocketRecord(cookie: 30, remotePort: 443, uid: 1000, inode: 30)]
        harness.owners.byCookie[30] = Self.fetcher
        harness.interface.received += 400_000
        #expect(Self.began(harness.tick()).first?.key == "org.example.Fetcher")

        var two = Harness()
        two.follow()
        two.udp = [
            SocketRecord(cookie: 30, remotePort: 443, uid: 1000), SocketRecord(cookie: 31, remotePort: 443, uid: 1000),
        ]
        two.owners.byCookie[30] = Self.fetcher
        two.owners.byCookie[31] = Self.uploader
        two.interface.received += 400_000
        #expect(Self.began(two.tick()).first?.label == "Other traffic", "two QUIC applications: no guess")

        var foreign = Harness()
        foreign.follow()
        foreign.udp = [SocketRecord(cookie: 30, remotePort: 443, uid: 65534)]
        foreign.owners.byCookie[30] = Self.fetcher
        foreign.interface.received += 400_000
        #expect(Self.began(foreign.tick()).first?.label == "Other traffic")
        #expect(foreign.owners.asked.isEmpty)
    }

    // MARK: - Never twice

    @Test func aReportedApplicationIsNotObservedUntilQuiet() {
        for reporter in [
            ReportedActivity(processID: nil, cgroup: nil, claimedApplication: "org.example.Fetcher"),
            ReportedActivity(processID: 100, cgroup: nil, claimedApplication: ""),
            ReportedActivity(processID: 9, cgroup: "/app-gnome-org.example.Fetcher-4242.scope", claimedApplication: ""),
        ] {
            var harness = Harness()
            harness.open(1, owner: Self.fetcher)
            harness.reported = [reporter]
            harness.follow()
            #expect(Self.began(harness.run(5, 1, received: 500_000)).isEmpty, "\(reporter)")
            // The reporter ends (`netactivity run` as its command exits) while bytes still drain.
            harness.reported = []
            #expect(Self.began(harness.run(3, 1, received: 500_000)).isEmpty, "held back while it moves")
            _ = harness.run(7, 1)
            #expect(Self.began(harness.run(2, 1, received: 500_000)).count == 1, "a new transfer after the quiet")
        }
    }

    @Test func anActivityReportedLaterEndsTheObservedOne() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        #expect(Self.began(harness.run(2, 1, received: 500_000)).count == 1)
        harness.reported = [ReportedActivity(processID: nil, cgroup: nil, claimedApplication: "org.example.Fetcher")]
        #expect(Self.ended(harness.run(1, 1, received: 500_000)) == ["org.example.Fetcher"])
        #expect(Self.began(harness.run(5, 1, received: 500_000)).isEmpty)
    }

    @Test func reportsOfOtherApplicationsChangeNothing() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.reported = [
            ReportedActivity(processID: 5, cgroup: "/", claimedApplication: "org.gnome.Software"),
            ReportedActivity(processID: nil, cgroup: nil, claimedApplication: ""),
        ]
        harness.follow()
        #expect(Self.began(harness.run(2, 1, received: 500_000)).count == 1)
    }

    @Test func whatIsShownEndsWhenDumpsFail() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(2, 1, received: 500_000)
        var ended: [String] = []
        for _ in 0..<8 {
            harness.interface.received += 500_000  // still busy, but no dump answers
            harness.now += .seconds(1)
            ended += Self.ended(harness.tracker.take(TrafficSample(interfaces: ["eth0": harness.interface]), at: harness.now))
        }
        #expect(ended == ["org.example.Fetcher"])
    }

    @Test func stoppingEndsWhatIsShown() {
        var harness = Harness()
        harness.open(1, owner: Self.fetcher)
        harness.follow()
        _ = harness.run(2, 1, received: 500_000)
        #expect(harness.tracker.stopFollowing() == [.ended(key: "org.example.Fetcher")])
        #expect(harness.tracker.stopFollowing().isEmpty)
    }

    @Test func manySocketsAndApplicationsStayBounded() {
        var harness = Harness()
        harness.follow()
        for cookie in 1...10_000 as ClosedRange<UInt64> {
            harness.open(cookie, owner: SocketOwner(application: "app\(cookie)", label: "app\(cookie)"))
            harness.move(cookie, received: 100)
        }
        let start = ContinuousClock.now
        #expect(harness.tick().isEmpty)
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}
