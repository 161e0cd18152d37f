import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Registration with the StatusNotifierWatcher: at start, after the watcher changes owner, and
/// when one appears late; and the process's own lifetime.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayRegistrationTests {
    /// Returns once the tray and then `watcher` have answered a Ping: whatever the tray sent the
    /// watcher before answering has been handled by then.
    private func settle(_ bus: TrayOnBus, _ watcher: TestWatcher) throws {
        for destination in [try bus.itemName, StatusNotifierNames.watcher] {
            let ping = try Message.methodCall(
                destination: destination, path: destination == StatusNotifierNames.watcher ? StatusNotifierNames.watcherPath : StatusNotifierNames.itemPath,
                interface: .peer, member: "Ping")
            _ = try bus.probe.connection.call(ping, timeout: .seconds(10))
        }
    }

    @Test func registersWithTheWatcherThatIsRunning() throws {
        let bus = try TrayOnBus()
        let watcher = try bus.startWatcher()
        try bus.startTray()
        let item = try bus.itemName
        let registrations = try watcher.waitForRegistrations(1)
        try settle(bus, watcher)
        #expect(watcher.registrations.count == 1, "registered more than once: \(watcher.registrations)")
        #expect(registrations.first?.service == item.rawValue)
        #expect(registrations.first?.sender == (try bus.probe.connection.owner(of: item))?.rawValue)
    }

    /// A watcher that refuses (a panel still starting up) is asked again, with growing pauses,
    /// without waiting for the name to change owner; the failure is said once.
    @Test func retriesARefusedRegistrationWithBackoff() throws {
        let bus = try TrayOnBus()
        let watcher = try bus.startWatcher(refusing: 2)
        let clock = ContinuousClock()
        let started = clock.now
        let tray = try bus.startTray()
        let registrations = try watcher.waitForRegistrations(1)
        let took = clock.now - started
        #expect(registrations.first?.service == (try bus.itemName).rawValue)
        #expect(watcher.refused == 2)
        // Backoff: 0.5 s, then 1 s, before the third call.
        #expect(took >= .milliseconds(1500), "retried after \(took)")
        try settle(bus, watcher)
        #expect(watcher.registrations.count == 1)
        #expect(try bus.probe.connection.owner(of: StatusNotifierNames.watcher)?.rawValue == watcher.uniqueName,
                "the same watcher throughout")
        let said = tray.stderrText.split(separator: "\n").filter { $0.contains("did not register") }
        #expect(said.count == 1, "one line for the failures: \(tray.stderrText)")
    }

    @Test func registersAgainWhenTheWatcherRestarts() throws {
        let bus = try TrayOnBus()
        let first = try bus.startWatcher()
        try bus.startTray()
        try first.waitForRegistrations(1)

        first.stop()
        try waitUntil("the first watcher to leave the bus") {
            try bus.probe.connection.owner(of: StatusNotifierNames.watcher) == nil
        }
        let second = try bus.startWatcher()
        let registrations = try second.waitForRegistrations(1)
        #expect(registrations.first?.service == (try bus.itemName).rawValue)
        try settle(bus, second)
        #expect(second.registrations.count == 1)
        #expect(first.registrations.count == 1)
    }

    @Test func registersAgainWhenAnotherWatcherTakesTheNameOver() throws {
        let bus = try TrayOnBus()
        let first = try bus.startWatcher()
        try bus.startTray()
        try first.waitForRegistrations(1)

        // The name passes from one owner to the next with no moment unowned.
        let second = try bus.startWatcher(replacing: true)
        #expect(try bus.probe.connection.owner(of: StatusNotifierNames.watcher)?.rawValue == second.uniqueName)
        let registrations = try second.waitForRegistrations(1)
        #expect(registrations.first?.service == (try bus.itemName).rawValue)
        #expect(first.registrations.count == 1)
    }

    @Test func waitsWithoutAWatcherAndRegistersWhenOneAppears() throws {
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        try waitUntil("the tray to say that no watcher is there") {
            tray.stderrText.contains("no StatusNotifierWatcher")
        }
        // Still serving the item without anyone to register with.
        let observer = try bus.observeItem()
        #expect(try observer.string("Status") == "Passive")
        #expect(tray.isRunning)

        let watcher = try bus.startWatcher()
        let registrations = try watcher.waitForRegistrations(1)
        #expect(registrations.first?.service == (try bus.itemName).rawValue)
    }

    @Test func keepsRunningAndFollowingWhenTheWatcherGoesAway() throws {
        let bus = try TrayOnBus()
        let watcher = try bus.startWatcher()
        let tray = try bus.startTray()
        try watcher.waitForRegistrations(1)
        watcher.stop()
        try waitUntil("the watcher to leave the bus") { try bus.probe.connection.owner(of: StatusNotifierNames.watcher) == nil }

        let observer = try bus.observeItem()
        try bus.callService("Push")
        try observer.wait(for: "Status Active without a watcher") { try $0.string("Status") == "Active" }
        #expect(tray.isRunning)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalEndsTheTrayWithStatus0(_ signal: Int32) throws {
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        let item = try bus.itemName
        tray.send(signal: signal)
        let result = try tray.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        try waitUntil("the tray's item name to be released") { try bus.probe.connection.owner(of: item) == nil }
    }

    @Test func losingTheBusEndsTheTrayWithStatus1() throws {
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        bus.bus.kill()
        let result = try tray.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 1, "\(result)")
        #expect(result.stderr.contains("lost the connection"), "\(result)")
    }
}
