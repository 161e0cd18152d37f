import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

/// Status, IconName and ToolTip follow the service's state, with one signal per real change.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayStateTests {
    @Test func followsPushAndPopWithOneSignalPerChange() throws {
        let bus = try TrayOnBus()
        let watcher = try bus.startWatcher()
        try bus.startTray()
        try watcher.waitForRegistrations(1)
        let item = try bus.observeItem()
        #expect(try item.string("Status") == "Passive")
        #expect(try item.string("IconName") == TrayIcons.idle)
        #expect(try item.toolTip().description == "Idle")

        try bus.callService("Push")
        try item.wait(for: "Status Active after Push") { try $0.string("Status") == "Active" }
        #expect(try item.string("IconName") == TrayIcons.active)
        #expect(try item.toolTip() == ("Network activity", "1 other connection"))

        try bus.callService("Pop")
        try item.wait(for: "Status Passive after Pop") { try $0.string("Status") == "Passive" }
        #expect(try item.string("IconName") == TrayIcons.idle)
        #expect(try item.toolTip().description == "Idle")

        let signals = item.takeSignals()
        #expect(signals.filter { $0.hasPrefix("NewStatus") } == ["NewStatus(Active)", "NewStatus(Passive)"], "\(signals)")
        #expect(occurrences(of: "NewIcon", in: signals) == 2, "\(signals)")
        #expect(occurrences(of: "NewToolTip", in: signals) == 2, "\(signals)")
        #expect(occurrences(of: "NewTitle", in: signals) == 0, "\(signals)")
    }

    @Test func statusWaitsForTheActivationDelay() throws {
        let bus = try TrayOnBus(serviceArguments: ["--throttle-ms", "0", "--activation-delay", "1", "--completion-delay", "0.1"])
        try bus.startTray()
        let item = try bus.observeItem()

        let pushed = ContinuousClock.now
        try bus.callService("Push")
        // The tooltip follows Active at once; Status follows Visible a second later.
        try item.wait(for: "the tooltip to list the push") { try $0.toolTip().description == "1 other connection" }
        let status = try item.string("Status")
        if ContinuousClock.now - pushed < .milliseconds(900) {
            #expect(status == "Passive", "Active before the activation delay passed")
        }
        try item.wait(for: "Status Active after the activation delay") { try $0.string("Status") == "Active" }
        #expect(ContinuousClock.now - pushed >= .milliseconds(950))
        try bus.callService("Pop")
        try item.wait(for: "Status Passive after Pop") { try $0.string("Status") == "Passive" }
    }

    @Test func aBlipShorterThanTheActivationDelayNeverShows() throws {
        let bus = try TrayOnBus(serviceArguments: ["--throttle-ms", "0", "--activation-delay", "1", "--completion-delay", "0.1"])
        try bus.startTray()
        let item = try bus.observeItem()
        try bus.callService("Push")
        try bus.callService("Pop")
        try item.wait(for: "the tooltip to read Idle again") { try $0.toolTip().description == "Idle" }
        // Longer than the activation delay: a Visible that wrongly turned true would show here.
        let signals = item.takeSignals(settle: .milliseconds(1300))
        #expect(occurrences(of: "NewStatus", in: signals) == 0, "\(signals)")
        #expect(occurrences(of: "NewIcon", in: signals) == 0, "\(signals)")
        #expect(try item.string("Status") == "Passive")
    }

    @Test func theTooltipListsActivitiesWithTheirPercent() throws {
        let bus = try TrayOnBus()
        try bus.startTray()
        let item = try bus.observeItem()

        guard let sync = try bus.callService("BeginActivity", [.string("Sync feeds")]).first?.uint32,
            let backup = try bus.callService("BeginActivity", [.string("<b>Backup</b> & more")]).first?.uint32
        else { throw BusTestError("BeginActivity gave no id") }
        try bus.callService("UpdateActivity", [.uint32(sync), .uint64(512), .uint64(2048)])
        // The service names this test process as the activities' application.
        let app = try testProcessApplicationPrefix()
        let expected = "\(app)Sync feeds — 25%\n\(app)&lt;b&gt;Backup&lt;/b&gt; &amp; more"
        try item.wait(for: "the tooltip to list both activities") { try $0.toolTip().description == expected }
        try item.wait(for: "Status Active") { try $0.string("Status") == "Active" }
        _ = item.takeSignals(settle: .zero)

        // Still 25%, and no bytes moved (so no rate): the activities changed, the tooltip did not.
        try bus.callService("UpdateActivity", [.uint32(sync), .uint64(512), .uint64(2047)])
        #expect(try item.toolTip().description == expected)
        try bus.callService("UpdateActivity", [.uint32(sync), .uint64(1024), .uint64(2048)])
        try item.wait(for: "the tooltip to show 50%") { try $0.toolTip().description.hasPrefix("\(app)Sync feeds — 50%") }
        #expect(occurrences(of: "NewToolTip", in: item.takeSignals()) == 1)

        try bus.callService("EndActivity", [.uint32(sync)])
        try bus.callService("EndActivity", [.uint32(backup)])
        try item.wait(for: "the tooltip to read Idle") { try $0.toolTip().description == "Idle" }
        try item.wait(for: "Status Passive") { try $0.string("Status") == "Passive" }
    }

    @Test func iconFlagsChooseTheIcons() throws {
        let bus = try TrayOnBus()
        try bus.startTray(["--icon", "emblem-synchronizing", "--idle-icon=network-offline"])
        let item = try bus.observeItem()
        #expect(try item.string("IconName") == "network-offline")
        #expect(try item.string("AttentionIconName") == "emblem-synchronizing")
        try bus.callService("Push")
        try item.wait(for: "the activity icon") { try $0.string("IconName") == "emblem-synchronizing" }
    }

    @Test func followsTheServiceThroughARestart() throws {
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        let item = try bus.observeItem()
        try bus.callService("Push")
        try item.wait(for: "Status Active") { try $0.string("Status") == "Active" }

        try bus.stopService()
        try item.wait(for: "Passive while the service is gone") {
            try $0.string("Status") == "Passive"
                && $0.toolTip().description == "The network activity service is not running"
        }
        try bus.startService()
        try item.wait(for: "Idle once the service is back") { try $0.toolTip().description == "Idle" }
        try bus.callService("Push")
        try item.wait(for: "Status Active from the new service") { try $0.string("Status") == "Active" }
        #expect(tray.isRunning)
    }
}
