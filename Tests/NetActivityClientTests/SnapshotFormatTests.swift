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
