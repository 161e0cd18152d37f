import Foundation
import NetActivity
import NetActivityContract
import Testing

/// `IndicatorSnapshot.merging(session:system:)`: the session's and the system's services as
/// one indicator.
struct MergedSnapshotTests {
    private static let mebibyte: UInt64 = 1 << 20
    private static let gibibyte: UInt64 = 1 << 30

    private func activity(_ id: UInt32, _ label: String, _ completed: UInt64, of total: UInt64) -> ActivityInfo {
        ActivityInfo(id: id, owner: ":1.\(id)", label: label, completed: completed, total: total, started: UInt64(id))
    }

    private var session: IndicatorSnapshot {
        IndicatorSnapshot(
            active: true, visible: false, count: 2, progress: 0.5,
            activities: [activity(1, "mail", Self.mebibyte / 2, of: Self.mebibyte)])
    }

    private var system: IndicatorSnapshot {
        IndicatorSnapshot(
            active: true, visible: true, count: 1, progress: 0.25,
            activities: [activity(1, "apt", Self.gibibyte, of: 4 * Self.gibibyte)])
    }

    // MARK: - Availability

    @Test func neitherServiceReadsAsUnavailable() {
        #expect(IndicatorSnapshot.merging(session: nil, system: nil) == .unavailable)
        #expect(IndicatorSnapshot.merging(session: .unavailable, system: .unavailable) == .unavailable)
        #expect(IndicatorSnapshot.merging(session: nil, system: .unavailable) == .unavailable)
    }

    @Test func oneServiceAloneIsItsOwnStateWithActivitiesMarked() {
        let sessionOnly = IndicatorSnapshot.merging(session: session, system: .unavailable)
        #expect(sessionOnly == session, "session entries keep bus .session")

        let systemOnly = IndicatorSnapshot.merging(session: nil, system: system)
        #expect(systemOnly.active && systemOnly.visible && systemOnly.count == 1)
        #expect(systemOnly.progress == 0.25)
        #expect(systemOnly.serviceAvailable)
        #expect(systemOnly.activities.map(\.bus) == [.system])
        #expect(systemOnly.activities.map(\.label) == ["apt"])
    }

    @Test func anUnavailableSnapshotAddsNothingWhateverItHolds() {
        var stale = system
        stale.serviceAvailable = false
        #expect(IndicatorSnapshot.merging(session: session, system: stale) == session)
    }

    // MARK: - Both

    @Test func flagsAreTheUnionAndCountTheSum() {
        let merged = IndicatorSnapshot.merging(session: session, system: system)
        #expect(merged.active)
        #expect(merged.visible, "the system's Visible shows even while the session's is still false")
        #expect(merged.count == 3)
        #expect(merged.serviceAvailable)

        let idle = IndicatorSnapshot()
        let quiet = IndicatorSnapshot.merging(session: idle, system: idle)
        #expect(!quiet.active && !quiet.visible && quiet.count == 0 && quiet.progress == nil && quiet.activities.isEmpty)
    }

    @Test func countSaturatesInsteadOfOverflowing() {
        let huge = IndicatorSnapshot(active: true, count: .max - 1)
        #expect(IndicatorSnapshot.merging(session: huge, system: system).count == .max)
    }

    @Test func activitiesListTheSessionsThenTheSystemsAndKeepTheirIDs() {
        let merged = IndicatorSnapshot.merging(session: session, system: system)
        #expect(merged.activities.map(\.label) == ["mail", "apt"])
        #expect(merged.activities.map(\.id) == [1, 1], "the same id on two buses is two activities")
        #expect(merged.activities.map(\.bus) == [.session, .system])
        #expect(Set(merged.activities).count == 2)
    }

    // MARK: - Progress

    @Test func progressIsWeightedByBytesOverBothLists() {
        let merged = IndicatorSnapshot.merging(session: session, system: system)
        let expected = Double(Self.mebibyte / 2 + Self.gibibyte) / Double(Self.mebibyte + 4 * Self.gibibyte)
        #expect(merged.progress == expected)
        #expect(abs((merged.progress ?? 0) - 0.25) < 0.001, "the 4 GiB download outweighs the 1 MiB one")
    }

    @Test func progressOfTheOnlyServiceThatReportsOne() {
        var unknownTotals = session
        unknownTotals.progress = nil
        unknownTotals.activities = [activity(2, "stream", 10, of: 0)]
        #expect(IndicatorSnapshot.merging(session: unknownTotals, system: system).progress == 0.25)
        #expect(IndicatorSnapshot.merging(session: session, system: IndicatorSnapshot(active: true, count: 4)).progress == 0.5)
    }

    @Test func progressFallsBackToTheMeanWhenAListLagsItsProgress() {
        var lagging = system
        lagging.activities = []
        #expect(IndicatorSnapshot.merging(session: session, system: lagging).progress == 0.375)
    }

    @Test func progressIgnoresActivitiesOfUnknownTotalAndNeverPassesOne() {
        var mixed = session
        mixed.activities.append(activity(3, "unknown", 99 * Self.gibibyte, of: 0))
        let merged = IndicatorSnapshot.merging(session: mixed, system: system)
        let expected = Double(Self.mebibyte / 2 + Self.gibibyte) / Double(Self.mebibyte + 4 * Self.gibibyte)
        #expect(merged.progress == expected)

        let huge = IndicatorSnapshot(
            active: true, count: 2, progress: 1,
            activities: [activity(1, "a", .max, of: .max), activity(2, "b", .max, of: .max)])
        let both = IndicatorSnapshot.merging(session: huge, system: huge)
        #expect(both.progress == 1, "sums past UInt64.max neither trap nor exceed 1")
    }
}

/// `IndicatorSnapshot.merging` against the table of cases the GNOME Shell extension's
/// `mergedProgress` is held to (`gnome-extension/tests/merged-progress-cases.json`, run under
/// gjs by `make test-gnome`): every panel shows the same overall progress.
@Suite struct MergedProgressTableTests {
    struct Table: Decodable {
        struct Case: Decodable {
            struct Side: Decodable {
                var progress: Double?
                var activities: [Activity]
            }
            struct Activity: Decodable {
                var completed: UInt64
                var total: UInt64
                var fraction: Double?
            }
            var name: String
            var sides: [Side]
            var expected: Double?
        }
        var cases: [Case]
    }

    static let cases: [Table.Case] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../gnome-extension/tests/merged-progress-cases.json").path
        guard let data = FileManager.default.contents(atPath: path), let table = try? JSONDecoder().decode(Table.self, from: data)
        else { return [] }
        return table.cases
    }()

    @Test func theTableIsRead() {
        #expect(Self.cases.count >= 8)
    }

    @Test(arguments: cases.map(\.name)) func mergingAgreesWithTheExtension(name: String) throws {
        let entry = try #require(Self.cases.first { $0.name == name })
        let snapshots = entry.sides.map { side in
            IndicatorSnapshot(
                active: true, visible: true, count: UInt32(side.activities.count), progress: side.progress,
                activities: side.activities.enumerated().map { index, activity in
                    ActivityInfo(
                        id: UInt32(index + 1), owner: ":1.1", label: "", completed: activity.completed, total: activity.total,
                        started: 0, reportedFraction: activity.fraction)
                })
        }
        let merged = IndicatorSnapshot.merging(session: snapshots[0], system: snapshots[1]).progress
        if let expected = entry.expected {
            #expect(abs((merged ?? -1) - expected) < 1e-9, "\(name): \(String(describing: merged))")
        } else {
            #expect(merged == nil, "\(name): \(String(describing: merged))")
        }
    }
}
