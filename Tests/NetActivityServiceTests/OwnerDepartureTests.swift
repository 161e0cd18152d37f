import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/interface.md, "Tracked activities": each is ended automatically the moment its owner leaves
/// the bus (crash, kill -9, exit without ending), in one state change and one batch of signals
/// however many it owned; the shared counter is nobody's and stays.
///
/// The service runs with no throttle (`ServiceDaemon()`'s default), so a release spread over
/// several state changes would show as several signals.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct OwnerDepartureTests {
    @Test func killedClientProcessReleasesAllItsActivitiesInOneSignal() throws {
        let service = try ServiceDaemon()
        let survivor = try service.probe()
        let survivingID = try survivor.begin("survivor")
        let doomed = try ClientProcess(bus: service.bus, push: 1, begin: "doomed", count: 1_024)
        #expect(try survivor.count() == 1 + 1 + 1_024)
        let observer = try service.probe()
        try observer.subscribe()

        doomed.kill()

        let release = try observer.waitForSignal(timeout: .seconds(30)) { _ in true }
        // The shared counter pushed by the dead client stays; the survivor's activity too.
        #expect(release["Count"] == .uint32(2), "first signal after the kill: \(release.keys.sorted())")
        #expect(release["Activities"] == invalidated, "Activities goes by name only")
        #expect(release["Active"] == nil, "Active announced though it stayed true")
        // Nothing of the release may trail behind: the next signal is the sentinel Push's.
        let sentinel = try observer.exchange("Push")
        #expect(sentinel.signalsBefore.map { $0["Count"] } == [.uint32(3)], "\(sentinel.signalsBefore)")

        #expect(try observer.count() == 3)
        #expect(activityIDs(in: try observer.property("Activities")) == [survivingID])
        // The survivor still owns its activity.
        try survivor.call("EndActivity", [.uint32(survivingID)])
        #expect(try observer.count() == 2)
    }

    @Test func closedConnectionReleasesItsActivitiesAndDeactivatesInOneSignal() throws {
        let service = try ServiceDaemon()
        var leaving: ServiceProbe? = try service.probe()
        for label in ["a", "b", "c"] { _ = try leaving?.begin(label) }
        let observer = try service.probe()
        try observer.subscribe()

        leaving = nil  // closes the socket: a real disconnect, announced by the bus

        let release = try observer.waitForSignal(timeout: .seconds(30)) { _ in true }
        #expect(release["Active"] == .boolean(false), "\(release)")
        #expect(release["Count"] == .uint32(0), "\(release)")
        #expect(release["Activities"] == invalidated, "\(release)")
        #expect(activityIDs(in: try observer.property("Activities")) == [])
        let sentinel = try observer.exchange("Push")
        #expect(sentinel.signalsBefore.count == 1, "\(sentinel.signalsBefore)")
        #expect(sentinel.signalsBefore.first?["Active"] == .boolean(true))
    }

    @Test func sharedCounterPushedByADepartedClientStays() throws {
        let service = try ServiceDaemon()
        var leaving: ServiceProbe? = try service.probe()
        try leaving?.call("Push")
        try leaving?.call("Push")
        _ = try leaving?.begin("own")
        let observer = try service.probe()
        try observer.subscribe()

        leaving = nil

        let release = try observer.waitForSignal(timeout: .seconds(30)) { _ in true }
        #expect(release["Count"] == .uint32(2), "\(release)")
        #expect(release["Active"] == nil, "\(release)")
        // Anyone may pop what the departed client pushed.
        try observer.call("Pop")
        try observer.call("Pop")
        #expect(try observer.count() == 0)
        #expect(try observer.property("Active") == .boolean(false))
    }

    @Test func departureOfAClientWithoutActivitiesAnnouncesNothing() throws {
        let service = try ServiceDaemon()
        let observer = try service.probe()
        try observer.call("Push")
        try observer.subscribe()
        var leaving: ServiceProbe? = try service.probe()
        let name = try #require(leaving?.connection.uniqueName)
        try leaving?.call("Push")
        try leaving?.call("Pop")
        _ = try observer.waitForSignal(timeout: .seconds(15)) { $0["Count"] == .uint32(1) }

        leaving = nil
        // Once the bus has dropped the name, its NameOwnerChanged is queued for the service
        // ahead of anything this client sends next.
        try waitUntil("the bus to drop \(name)") { try observer.connection.owner(of: name) == nil }

        let sentinel = try observer.exchange("Push")
        #expect(sentinel.signalsBefore.count == 1, "\(sentinel.signalsBefore)")
        #expect(sentinel.signalsBefore.first?.keys.sorted() == ["Count"], "\(sentinel.signalsBefore)")
        #expect(sentinel.signalsBefore.first?["Count"] == .uint32(2))
    }

    @Test func eachDepartureReleasesOnlyItsOwnersActivities() throws {
        let service = try ServiceDaemon()
        let first = try ClientProcess(bus: service.bus, begin: "first", count: 3)
        let second = try ClientProcess(bus: service.bus, begin: "second", count: 2)
        let observer = try service.probe()
        #expect(try observer.count() == 5)

        first.kill()
        try waitUntil("the first client's activities to end") { try observer.count() == 2 }
        let left = try #require(try observer.property("Activities").elements)
        #expect(left.count == 2)
        #expect(left.allSatisfy { $0.fields?[1].string == second.uniqueName && $0.fields?[2].string == "second" })

        second.kill()
        try waitUntil("the second client's activities to end") { try observer.count() == 0 }
        #expect(try observer.property("Active") == .boolean(false))
    }
}

// MARK: - A client process to kill

/// `na-testclient` (Tests/Support/TestClientExecutable): pushes, begins activities, then holds its
/// connection until killed. A separate process, so that SIGKILL ends it the way a crash would.
private final class ClientProcess {
    let process: ChildProcess
    /// Its unique name on the bus.
    let uniqueName: String

    /// Starts the client and waits until all its calls have succeeded.
    init(bus: PrivateBus, push: Int = 0, begin label: String, count: Int) throws {
        process = try ChildProcess(
            try builtProduct("na-testclient"),
            ["--address", bus.address, "--push", "\(push)", "--begin", label, "--count", "\(count)"])
        let line = try process.readLine(timeout: .seconds(60))
        guard let line, line.hasPrefix("ready :") else {
            let result = try? process.waitForExit(timeout: .seconds(5))
            throw BusTestError("na-testclient did not get ready: \(result?.description ?? line ?? "")")
        }
        uniqueName = String(line.dropFirst("ready ".count))
    }

    /// SIGKILL, and wait until it is reaped.
    func kill() {
        process.send(signal: SIGKILL)
        let result = try? process.waitForExit(timeout: .seconds(10))
        #expect(result?.signal == SIGKILL, "na-testclient: \(result?.description ?? "did not die")")
    }
}
