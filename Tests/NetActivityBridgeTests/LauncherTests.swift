import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import StackTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The launcher source of `netactivity bridge` against the real libunity (through PyGObject),
/// `gdbus emit` and a sender of the test's own, on a private session bus with the real
/// netactivityd.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized) struct LauncherTests {
    /// The desktop entries the bridge finds.
    typealias Installed = LauncherBridge

    @Test func libunitySendsOnlyOnceTheBridgeOwnsTheNameAndItsProgressShows() throws {
        let launcher = try LauncherBridge()
        let monitor = try BusMonitor(address: launcher.address, ["type='signal',interface='com.canonical.Unity.LauncherEntry'"])
        let app = try LibunityApp(
            Installed.downloader.id, steps: ["progress=0.25,visible=1", "progress=0.75", "visible=0", "progress=0.5,visible=1"],
            address: launcher.address)
        #expect(app.process.stdoutText.contains("applied 0 unity-running=False"))
        #expect(monitor.count("member=Update") == 0, "libunity sends nothing while nobody owns com.canonical.Unity")

        try launcher.startBridge()
        try app.waitFor("unity-running=True")
        try launcher.waitForActivity(Installed.downloader.name, "with its hints and fraction 0.25") {
            $0["Fraction"] == .double(0.25)
        }
        let activity = try #require(try launcher.activities()[Installed.downloader.name])
        #expect(activity["ClaimedApplication"] == .string(Installed.downloader.id))
        #expect(activity["Icon"] == .string(Installed.downloader.icon))
        #expect(activity["Kind"] == .string("other"))
        #expect(monitor.count("member=Update") >= 1)

        try app.advance()
        try launcher.waitForActivity(Installed.downloader.name, "at 0.75") { $0["Fraction"] == .double(0.75) }
        try app.advance()
        try launcher.waitForCount(0)
        try app.advance()
        try launcher.waitForActivity(Installed.downloader.name, "again, at 0.5") { $0["Fraction"] == .double(0.5) }

        // An app started while the bridge owns the name sends at once; its entry is in
        // XDG_DATA_DIRS, with an icon by path.
        let player = try LibunityApp(Installed.player.id, steps: ["progress=0.6,visible=1"], address: launcher.address)
        try launcher.waitForActivity(Installed.player.name, "at 0.6 with its icon") {
            $0["Fraction"] == .double(0.6) && $0["Icon"] == .string(Installed.player.icon)
        }
        try player.quit()

        // libunity sends no `progress-visible false` on exit: the app leaving the bus ends it,
        // a second after (another connection may still update the entry).
        try app.quit()
        let left = ContinuousClock.now
        try launcher.waitForCount(0)
        #expect(ContinuousClock.now - left >= .milliseconds(500), "ended only after the grace period")
        #expect(launcher.bridge?.stderrText == "", "\(launcher.bridge?.stderrText ?? "")")
    }

    @Test func aDockThatAsksGetsTheNameAndTheBridgeTakesItWhenFreed() throws {
        let launcher = try LauncherBridge()
        let dock = try Connection(.address(launcher.address))
        #expect(try dock.requestName("com.canonical.Unity", options: [.doNotQueue]) == .primaryOwner)
        let bridge = try launcher.startBridge(waitForName: false)

        // The dock owns the name; the broadcasts still reach the bridge. Sent until one is seen,
        // as nothing says when the bridge has subscribed.
        let sender = try LauncherSender(address: launcher.address)
        try waitUntil("an update to reach the service while a dock owns the name") {
            try sender.update(Installed.player.id, [("progress", .double(0.5)), ("progress-visible", .boolean(true))])
            sender.flush()
            return try launcher.activities()[Installed.player.name] != nil
        }
        #expect(try launcher.unityOwnerPID() != UInt32(bridge.pid))

        // Freed: the bridge takes it.
        #expect(try dock.releaseName("com.canonical.Unity"))
        try waitUntil("the bridge to take the freed name") { try launcher.unityOwnerPID() == UInt32(bridge.pid) }

        // A dock asking with replace-existing gets it from the bridge at once.
        let secondDock = try Connection(.address(launcher.address))
        #expect(try secondDock.requestName("com.canonical.Unity", options: [.replaceExisting, .doNotQueue]) == .primaryOwner)
        #expect(try launcher.probe.connection.owner(of: "com.canonical.Unity") == secondDock.uniqueName)
        try sender.update(Installed.player.id, [("progress", .double(0.75))])
        sender.flush()
        try launcher.waitForActivity(Installed.player.name, "at 0.75 while the second dock owns the name") {
            $0["Fraction"] == .double(0.75)
        }

        // The dock exits: its name is freed with its connection, and the bridge takes it again.
        _ = consume secondDock
        try waitUntil("the bridge to take the name back from the dock that left") {
            try launcher.unityOwnerPID() == UInt32(bridge.pid)
        }
        #expect(bridge.stderrText == "", "\(bridge.stderrText)")
    }

    @Test func malformedUpdatesAreIgnoredAndGdbusEmitsAreOneEntry() throws {
        try requireTool("gdbus")
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let long = String(repeating: "a", count: 10_240)
        let downloader = "'application://\(Installed.downloader.id).desktop'"
        let malformed: [[String]] = [
            [downloader, "{'progress': <'half'>, 'progress-visible': <1>}"],  // wrong types
            [downloader, "{'progress-visible': <'true'>}"],
            [downloader, "{'progress-visible': 'true'}"],  // a{ss}
            [downloader],  // (s)
            [downloader, "{'progress-visible': <true>}", "'extra'"],  // (sa{sv}s)
            ["'application://../../etc/passwd.desktop'", "{'progress-visible': <true>}"],
            ["'application:///usr/share/applications/x.desktop'", "{'progress-visible': <true>}"],
            ["'http://\(Installed.downloader.id).desktop'", "{'progress-visible': <true>}"],
            ["'application://\(Installed.downloader.id)'", "{'progress-visible': <true>}"],
            ["'application://.hidden.desktop'", "{'progress-visible': <true>}"],
            ["'application://\(long).desktop'", "{'progress-visible': <true>}"],
            ["'\(long)'", "{'progress-visible': <true>}"],
            [downloader, "{'\(long)': <true>, 'count': <int64 3>}"],
        ]
        for arguments in malformed {
            let result = try launcher.gdbusEmit(arguments)
            #expect(result.succeeded, "\(result)")
        }
        // From a connection per signal, as gdbus has it: one entry all the same, with a 10 KB
        // string it has no use for.
        let unlisted = "'application://\(Installed.unlisted).desktop'"
        #expect(try launcher.gdbusEmit([unlisted, "{'progress': <0.4>, 'quicklist': <'\(long)'>}"]).succeeded)
        #expect(try launcher.gdbusEmit([unlisted, "{'progress-visible': <true>}"]).succeeded)
        try launcher.waitForActivity(Installed.unlisted, "labelled with its desktop id, at 0.4") {
            $0["Fraction"] == .double(0.4) && $0["Icon"] == .string("") && $0["ClaimedApplication"] == .string(Installed.unlisted)
        }
        let shown = try launcher.activities()
        #expect(shown.count == 1, "\(shown.keys)")
        // gdbus's connections are gone: nothing else updates it, so it ends on its own.
        try launcher.waitForCount(0)

        // Out of range and not a number, from one sender: clamped, and ignored.
        let sender = try LauncherSender(address: launcher.address)
        try sender.update(Installed.player.id, [("progress", .double(7.5)), ("progress-visible", .boolean(true))])
        try sender.update(Installed.downloader.id, [("progress", .double(.nan)), ("progress-visible", .boolean(true))])
        sender.flush()
        try launcher.waitForActivity(Installed.player.name, "clamped to 1") { $0["Fraction"] == .double(1) }
        try launcher.waitForActivity(Installed.downloader.name, "with an unknown fraction") { $0["Fraction"] == .double(-1) }
        #expect(bridge.isRunning)
        #expect(bridge.stderrText == "", "\(bridge.stderrText)")
    }

    @Test func aFloodFromOneSenderIsCoalescedInBoundedMemory() throws {
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let monitor = try BusMonitor(
            address: launcher.address,
            ["type='method_call',member='UpdateActivityFraction'", "type='method_call',member='BeginActivityWithHints'"])
        let sender = try LauncherSender(address: launcher.address)
        try sender.update(Installed.downloader.id, [("progress", .double(0)), ("progress-visible", .boolean(true))])
        sender.flush()
        try launcher.waitForActivity(Installed.downloader.name, "begun")
        let before = try residentSetSize(of: bridge.pid)

        // 10,000 updates in about a second: 100 every 10 ms.
        let clock = ContinuousClock()
        let start = clock.now
        for batch in 0..<100 {
            for step in 1...100 {
                try sender.update(Installed.downloader.id, [("progress", .double(Double(batch * 100 + step) / 10_000))])
            }
            sender.flush()
            Thread.sleep(until: Date(timeIntervalSinceNow: 0.01))
        }
        try launcher.waitForActivity(Installed.downloader.name, "at the last value sent, 1.0") { $0["Fraction"] == .double(1) }
        // The calls go on until the last value has reached the service, later than the last
        // update sent on a loaded machine: they are counted over that whole time.
        let calls = monitor.count("member=UpdateActivityFraction")
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let after = try residentSetSize(of: bridge.pid)

        #expect(calls >= 1 && Double(calls) <= 40 * seconds + 5, "\(calls) UpdateActivityFraction calls in about \(seconds) s")
        #expect(monitor.count("member=BeginActivityWithHints") == 1)
        #expect(after - before < 16 << 20, "RSS grew from \(before) to \(after) bytes")
        #expect(bridge.stderrText == "", "\(bridge.stderrText)")
    }

    @Test func twoThousandEntriesFromOneSenderStopAtTheLimitSaidOnce() throws {
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let sender = try LauncherSender(address: launcher.address)
        for index in 0..<2_000 {
            try sender.update("org.example.Many\(index)", [("progress", .double(0.5)), ("progress-visible", .boolean(true))])
        }
        // After all of them: one fewer is shown, and nothing else begins in its place.
        try sender.update("org.example.Many0", [("progress-visible", .boolean(false))])
        sender.flush()
        try waitUntil("org.example.Many0 to end, with 999 others shown", timeout: .seconds(30)) {
            let shown = try launcher.activities()
            return shown.count == 999 && shown["org.example.Many0"] == nil
        }
        try waitUntil("the limit to be said") { bridge.stderrText.contains("more than") }
        let lines = bridge.stderrText.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("more than 1000 launcher entries show progress"), "\(lines)")

        // The sender leaves: everything it showed ends with it.
        _ = consume sender
        try launcher.waitForCount(0, timeout: .seconds(30))
    }

    @Test func theBridgeSleepsOnceAnEntryHasEnded() throws {
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let sender = try LauncherSender(address: launcher.address)
        try sender.update(Installed.player.id, [("progress", .double(0.5)), ("progress-visible", .boolean(true))])
        sender.flush()
        try launcher.waitForCount(1)
        // Its sender leaves: the one-shot timer ends it, and nothing is left to wake for.
        _ = consume sender
        try launcher.waitForCount(0)
        // The service's answers to the end are still on their way.
        try waitUntil("the bridge to settle") { try wakeUps(of: bridge.pid, over: 0.2).isEmpty }
        let woken = try wakeUps(of: bridge.pid, over: 2)
        #expect(woken.isEmpty, "an idle bridge woke in 2 s: \(woken)")
    }

    @Test func stoppingTheBridgeEndsEveryActivityAndGivesTheNameBack() throws {
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let sender = try LauncherSender(address: launcher.address)
        try sender.update(Installed.downloader.id, [("progress", .double(0.3)), ("progress-visible", .boolean(true))])
        sender.flush()
        try launcher.waitForCount(1)
        bridge.send(signal: SIGTERM)
        let result = try bridge.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr == "", "\(result.stderr)")
        try launcher.waitForCount(0)
        #expect(try launcher.unityOwnerPID() == nil)
    }

    @Test func killingTheBridgeEndsEveryActivity() throws {
        let launcher = try LauncherBridge()
        let bridge = try launcher.startBridge()
        let sender = try LauncherSender(address: launcher.address)
        for id in [Installed.downloader.id, Installed.player.id, Installed.unlisted] {
            try sender.update(id, [("progress", .double(0.3)), ("progress-visible", .boolean(true))])
        }
        sender.flush()
        try launcher.waitForCount(3)
        bridge.send(signal: SIGKILL)
        let result = try bridge.waitForExit(timeout: .seconds(10))
        #expect(result.signal == SIGKILL)
        try launcher.waitForCount(0)
        try waitUntil("com.canonical.Unity to be freed") { try launcher.unityOwnerPID() == nil }
    }
}
