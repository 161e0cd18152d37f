@testable import NetActivityCLI
import NetActivity
import Testing

/// The panel texts never show a count that contradicts what is shown.
struct SnapshotFormatTests {
    private let sync = ActivityInfo(id: 1, owner: ":1.7", label: "Sync", completed: 1, total: 4, started: 0)

    @Test func waybarTextLeavesOutAZeroCountWhileStillVisible() {
        // Visible lingers through the completion delay after Count reached 0.
        let lingering = IndicatorSnapshot(active: false, visible: true, count: 0)
        #expect(SnapshotFormat.text(lingering) == "⇅")
    }

    @Test func countNeverReadsBelowTheListedActivities() {
        // Count is throttled, Activities too, but a panel may see one change before the other.
        let lagging = IndicatorSnapshot(active: true, visible: true, count: 0, progress: 0.25, activities: [sync])
        #expect(SnapshotFormat.text(lagging) == "⇅ 1 25%")
        #expect(SnapshotFormat.tooltip(lagging).hasPrefix("Network activity: 1\nSync 25%"))
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
        #expect(markup.applicationName == "Curl")
        var unknown = firefox
        unknown.application = ""
        #expect(unknown.title == "Sync feeds")
        unknown.bus = .system
        #expect(unknown.title == "system: Sync feeds")
    }

    @Test func waybarTooltipEscapesLabelsForPango() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 2, progress: 0.25, activities: [firefox, markup])
        let tooltip = SnapshotFormat.tooltip(state)
        #expect(tooltip.contains("Firefox — Sync feeds 25%"), "\(tooltip)")
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
