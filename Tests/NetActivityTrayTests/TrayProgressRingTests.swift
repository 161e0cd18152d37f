import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

/// The ring drawn into `IconPixmap` while the overall progress is known, as a host reads it.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayProgressRingTests {
    @Test func theRingIsDrawnIntoIconPixmapWhileProgressIsKnown() throws {
        let bus = try TrayOnBus()
        try bus.startTray()
        let item = try bus.observeItem()
        #expect(try item.pixmaps().isEmpty)

        let download = try bus.begin("Download")
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(256), .uint64(1024)])
        try item.wait(for: "Status Active with IconName empty") {
            try $0.string("Status") == "Active" && $0.string("IconName") == ""
        }
        let quarter = try item.pixmaps()
        #expect(quarter.map(\.width) == [16, 22, 24, 32, 48])
        for pixmap in quarter {
            #expect(pixmap.height == pixmap.width)
            #expect(pixmap.bytes.count == pixmap.width * pixmap.height * 4)
        }
        #expect(quarter == ProgressRing.pixmaps(percent: 25))
        // The other icon properties stay as they were.
        #expect(try item.string("AttentionIconName") == TrayIcons.active)

        try bus.callService("UpdateActivity", [.uint32(download), .uint64(768), .uint64(1024)])
        try item.wait(for: "the ring at 75%") { try $0.pixmaps() == ProgressRing.pixmaps(percent: 75) }
        #expect(try item.pixmaps() != quarter)
        #expect(try item.string("IconName") == "")

        // The total becomes unknown: the theme icon is back, the pixmaps gone.
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(0), .uint64(0)])
        try item.wait(for: "IconName back to the theme icon") { try $0.string("IconName") == TrayIcons.active }
        #expect(try item.pixmaps().isEmpty)

        try bus.callService("EndActivity", [.uint32(download)])
        try item.wait(for: "Status Passive") { try $0.string("Status") == "Passive" }
        #expect(try item.string("IconName") == TrayIcons.idle)
        #expect(try item.pixmaps().isEmpty)
    }

    @Test func noProgressRingKeepsTheThemeIcon() throws {
        let bus = try TrayOnBus()
        try bus.startTray(["--no-progress-ring"])
        let item = try bus.observeItem()
        let download = try bus.begin("Download")
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(512), .uint64(1024)])
        try item.wait(for: "Status Active with the tooltip at 50%") {
            try $0.string("Status") == "Active" && $0.toolTip().description.hasSuffix("Download — 50%")
        }
        #expect(try item.string("IconName") == TrayIcons.active)
        #expect(try item.pixmaps().isEmpty)
    }

    /// Progress reported far faster than the ring may change: the drawings are spaced by at
    /// least a quarter of a second, the last percent is drawn in the end, and then nothing.
    @Test func quickProgressIsDrawnAtMostFourTimesASecond() throws {
        let bus = try TrayOnBus()
        try bus.startTray()
        let item = try bus.observeItem()
        let download = try bus.begin("Download")
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(0), .uint64(100)])
        try item.wait(for: "the ring at 0%") { try $0.pixmaps() == ProgressRing.pixmaps(percent: 0) }
        _ = item.takeSignals(settle: .zero)

        let clock = ContinuousClock()
        let started = clock.now
        for percent in 1...60 {
            try bus.callService("UpdateActivity", [.uint32(download), .uint64(UInt64(percent)), .uint64(100)])
            usleep(10_000)
        }
        try item.wait(for: "the ring at 60%") { try $0.pixmaps() == ProgressRing.pixmaps(percent: 60) }
        let signals = item.takeSignals(settle: .milliseconds(600))
        let elapsed = clock.now - started
        let newIcons = occurrences(of: "NewIcon", in: signals)
        // One drawing per started quarter second, plus the held one at the end.
        let allowed = Int((elapsed / .milliseconds(250)).rounded(.up)) + 1
        #expect(newIcons >= 2 && newIcons <= allowed, "\(newIcons) NewIcon in \(elapsed): \(signals)")
        #expect(try item.pixmaps() == ProgressRing.pixmaps(percent: 60))
    }
}

extension TrayOnBus {
    /// Begins a tracked activity from the probe connection and returns its id.
    func begin(_ label: String) throws -> UInt32 {
        guard let id = try callService("BeginActivity", [.string(label)]).first?.uint32 else {
            throw BusTestError("BeginActivity gave no id")
        }
        return id
    }
}

extension ItemObserver {
    /// `IconPixmap`, decoded as declared: an `a(iiay)`.
    func pixmaps() throws -> [IconPixmap] {
        let value = try property("IconPixmap")
        guard let pictures = StatusNotifierInterface.iconPixmap.decode(value)?.pictures else {
            throw BusTestError("IconPixmap is not an a(iiay): \(value)")
        }
        return pictures
    }
}
