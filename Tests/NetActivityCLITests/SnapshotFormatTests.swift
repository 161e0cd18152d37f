@testable import NetActivityCLI
import DesktopApplications
import Foundation
import NetActivity
import NetActivityContract
import Testing

/// The panel texts never show a count that contradicts what is shown.
struct SnapshotFormatTests {
    private let sync = ActivityInfo(id: 1, owner: ":1.7", label: "Sync", completed: 1, total: 4, started: 0)

    /// A property declared after this client was built (docs/architecture.md's `Retries`) comes
    /// out of `status --json` and `watch --format json` under its name in snake case, with no
    /// edit here: the client keeps it in `otherProperties`, and the JSON prints those too.
    @Test func aPropertyTheClientHasNoFieldForIsPrintedUnderItsName() throws {
        var activity = sync
        activity.otherProperties = [
            "Retries": .uint32(3),
            "MirrorURL": .array(element: "s", [.string("a"), .string("b")]),
            "ExtraHints": .dictionary(key: "s", value: "v", [(.string("x"), .variant(.boolean(true)))]),
        ]
        let json = SnapshotFormat.json(IndicatorSnapshot(active: true, visible: true, count: 1, activities: [activity]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let printed = try #require((object["activities"] as? [[String: Any]])?.first)
        #expect((printed["retries"] as? NSNumber)?.intValue == 3)
        #expect(printed["mirror_url"] as? [String] == ["a", "b"])
        #expect((printed["extra_hints"] as? [String: Bool]) == ["x": true])
        #expect((printed["completed"] as? NSNumber)?.intValue == 1, "the declared ones as before")
    }

    @Test func jsonNamesAreTheDeclarationsInSnakeCase() {
        #expect(SnapshotFormat.jsonName("ClaimedApplication") == "claimed_application")
        #expect(SnapshotFormat.jsonName("ProcessID") == "process_id")
        #expect(SnapshotFormat.jsonName("MirrorURL") == "mirror_url")
        #expect(SnapshotFormat.jsonName("Id") == "id")
        #expect(SnapshotFormat.jsonName("IDFor") == "id_for")
    }

    @Test func waybarTextLeavesOutAZeroCountWhileStillVisible() {
        // Visible lingers through the completion delay after Count reached 0.
        let lingering = IndicatorSnapshot(active: false, visible: true, count: 0)
        #expect(SnapshotFormat.text(lingering) == "⇅")
    }

    @Test func countNeverReadsBelowTheListedActivities() {
        // Count is throttled, Activities too, but a panel may see one change before the other.
        let lagging = IndicatorSnapshot(active: true, visible: true, count: 0, progress: 0.25, activities: [sync])
        #expect(SnapshotFormat.text(lagging) == "⇅ 1 25%")
        #expect(SnapshotFormat.tooltip(lagging).hasPrefix("Network activity: 1\nSync — 25%"))
    }

    @Test func activeBeforeAnyCountArrivedHasNoNumber() {
        let leading = IndicatorSnapshot(active: true, visible: false, count: 0)
        #expect(SnapshotFormat.tooltip(leading) == "Network activity")
    }
}

/// Who is using the network, in every format, and labels that reach markup as written.
struct AttributionFormatTests {
    private let firefox = ActivityInfo(
        id: 3, owner: ":1.9", label: "Sync feeds", completed: 1, total: 4, started: 0, processID: 4242, userID: 1000,
        application: "org.mozilla.firefox")
    private let markup = ActivityInfo(
        id: 4, owner: ":1.10", label: "Q&A sync <b>now</b>", completed: 0, total: 0, started: 0, application: "curl")

    @Test func titlesNameTheApplicationFirst() {
        #expect(firefox.title == "Firefox — Sync feeds")
        #expect(markup.applicationName() == "Curl")
        var unknown = firefox
        unknown.application = ""
        #expect(unknown.title == "Sync feeds")
        unknown.bus = .system
        #expect(unknown.title == "system: Sync feeds")
    }

    @Test func waybarTooltipEscapesLabelsForPango() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 2, progress: 0.25, activities: [firefox, markup])
        let tooltip = SnapshotFormat.tooltip(state)
        #expect(tooltip.contains("Firefox — Sync feeds — 25%"), "\(tooltip)")
        #expect(tooltip.contains("Curl — Q&amp;A sync &lt;b&gt;now&lt;/b&gt;"), "\(tooltip)")
        #expect(!tooltip.contains("<b>") && !tooltip.contains("Q&A"), "\(tooltip)")
    }

    @Test func jsonCarriesTheAttribution() {
        let json = SnapshotFormat.json(IndicatorSnapshot(active: true, visible: true, count: 1, activities: [firefox]))
        #expect(json.contains(#""application":"org.mozilla.firefox""#), "\(json)")
        #expect(json.contains(#""process_id":4242"#) && json.contains(#""user_id":1000"#), "\(json)")
        #expect(json.contains(#""bus":"session""#), "\(json)")
    }

    @Test func statusShowsTheApplicationAndProcess() {
        let status = SnapshotFormat.status(IndicatorSnapshot(active: true, visible: true, count: 1, activities: [firefox]), now: 0)
        #expect(status.contains("#3 Firefox — Sync feeds"), "\(status)")
        #expect(status.contains("by :1.9 (pid 4242)"), "\(status)")
    }
}

/// With thousands of activities live, a tooltip lists the first ten and counts the rest.
struct LongTooltipTests {
    @Test func tooltipsListTenActivitiesAndCountTheRest() {
        let activities = (1...65_536 as ClosedRange<UInt32>).map {
            ActivityInfo(id: $0, owner: ":1.2", label: "file \($0)", completed: 0, total: 0, started: 0)
        }
        let state = IndicatorSnapshot(active: true, visible: true, count: 65_536, activities: activities)
        let lines = SnapshotFormat.tooltip(state).split(separator: "\n")
        #expect(lines.count == 1 + 10 + 1, "\(lines.prefix(14))")
        #expect(lines.last == "… and 65526 more")
    }
}

/// Contract version 3 in every format: rate and time left, kind, claimed application.
@Suite struct TransferFormatTests {
    static let update = ActivityInfo(
        id: 4, owner: ":1.4", label: "Downloading updates", completed: 450_000_000, total: 1_000_000_000, started: 0,
        application: "netactivity", claimedApplication: "org.example.NoSuchApp", kind: "update", rate: 2_300_000)
    static let feeds = ActivityInfo(
        id: 5, owner: ":1.5", label: "Sync feeds", completed: 0, total: 0, started: 0, kind: "sync",
        reportedFraction: 0.5, rate: 0)

    @Test(arguments: [
        (0.0, "0 B/s"), (512, "512 B/s"), (999, "999 B/s"), (1_500, "1.5 kB/s"), (2_300_000, "2.3 MB/s"),
        (23_400_000, "23.4 MB/s"), (234_000_000, "234 MB/s"), (999_600, "1.0 MB/s"), (.infinity, "0 B/s"),
    ] as [(Double, String)])
    func ratesReadInSIUnits(rate: Double, text: String) {
        #expect(SnapshotFormat.rate(rate) == text)
    }

    @Test(arguments: [(0.0, "0:00"), (45, "0:45"), (80, "1:20"), (79.2, "1:20"), (3_723, "1:02:03")] as [(Double, String)])
    func timeLeftReadsAsAClock(seconds: Double, text: String) {
        #expect(SnapshotFormat.clock(seconds) == text)
    }

    @Test func plainShowsPercentRateAndTimeLeft() {
        let state = IndicatorSnapshot(
            active: true, visible: true, count: 2, progress: 0.45, activities: [Self.update, Self.feeds], rate: 2_300_000)
        // 550 MB at 2.3 MB/s: 239 s.
        #expect(SnapshotFormat.plain(state) == "active: 2 45% 2.3 MB/s 4:00 left")
    }

    @Test func tooltipLinesSayWhatEachTransferIsForAndHowFast() {
        let state = IndicatorSnapshot(
            active: true, visible: true, count: 2, progress: 0.45, activities: [Self.update, Self.feeds], rate: 2_300_000)
        let lines = SnapshotFormat.tooltip(state).split(separator: "\n").map(String.init)
        #expect(lines[1] == "NoSuchApp — Downloading updates — 45% — 2.3 MB/s, 4 min left", "\(lines)")
        #expect(lines[2] == "Sync feeds — 50%", "a fraction alone has no time left")
    }

    @Test func waybarNamesTheBusiestKindAndItsPercentIsTheTextsPercent() throws {
        let state = IndicatorSnapshot(
            active: true, visible: true, count: 2, progress: 0.4567, activities: [Self.feeds, Self.update], rate: 2_300_000)
        let line = SnapshotFormat.waybar(state)
        #expect(line.contains(#""alt":"update""#), "\(line)")
        #expect(line.contains(#""percentage":45"#), "\(line)")
        #expect(line.contains(#""text":"⇅ 2 45% 2.3 MB/s""#), "\(line)")
    }

    @Test func jsonCarriesTheVersion3Fields() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 1, progress: 0.45, activities: [Self.update], rate: 2_300_000)
        let json = SnapshotFormat.json(state)
        for member in [
            #""rate":2300000.0"#, #""remaining_seconds":239"#, #""kind":"update""#, #""fraction":0.45"#,
            #""claimed_application":"org.example.NoSuchApp""#, #""icon":"""#,
        ] {
            #expect(json.contains(member), "\(member) in \(json)")
        }
        let unknown = SnapshotFormat.json(IndicatorSnapshot(active: true, visible: true, count: 1, activities: [Self.feeds]))
        #expect(unknown.contains(#""remaining_seconds":null"#), "\(unknown)")
    }

    @Test func theMergedViewSumsTheRates() {
        let session = IndicatorSnapshot(active: true, visible: true, count: 1, activities: [Self.update], rate: 2_300_000)
        var systemUpdate = Self.update
        systemUpdate.rate = 700_000
        let system = IndicatorSnapshot(active: true, visible: true, count: 1, activities: [systemUpdate], rate: 700_000)
        #expect(IndicatorSnapshot.merging(session: session, system: system).rate == 3_000_000)
    }
}

/// The claimed application's name, from its desktop entry.
@Suite struct DesktopEntryNameTests {
    @Test func theClaimedApplicationReadsAsItsDesktopEntrysName() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("entries-\(getpid())")
        let applications = home.appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try """
            [Desktop Action new]
            Name=Not this one
            [Desktop Entry]
            Type=Application
            Name[de]=Software-Verwaltung
            Name=GNOME Software
            """.write(to: applications.appendingPathComponent("org.gnome.Software.desktop"), atomically: true, encoding: .utf8)
        let installed = DesktopEntries(directories: [applications.path])
        let bridged = ActivityInfo(
            id: 1, owner: ":1.1", label: "Downloading updates", completed: 0, total: 0, started: 0,
            application: "netactivity", claimedApplication: "org.gnome.Software")
        #expect(bridged.title(in: installed) == "GNOME Software — Downloading updates")
        var unknown = bridged
        unknown.claimedApplication = "org.example.Missing"
        #expect(unknown.title(in: installed) == "Missing — Downloading updates", "no entry: the id's last part")
        for hostile in ["../../etc/passwd", ".hidden", "a/b", String(repeating: "x", count: 300)] {
            #expect(installed.name(of: hostile) == nil, "\(hostile.prefix(20))")
        }
    }
}
