import BusTestSupport
import DBus
import NetActivityContract
import Testing

@testable import NetActivity
@testable import NetActivityCLI

/// Every state the client hands out is consistent in itself, however the service's signals
/// interleave: random timelines of a service (pushes, pops, begins, ends, byte and fraction
/// updates) whose main object's `Count` and activities' progress go out at random moments, as
/// the throttles send them, while objects come and go at once.
@Suite struct MirrorPropertyTests {
    /// What the simulated service holds.
    struct Truth {
        var shared: UInt32 = 0
        var live: [UInt32: (completed: UInt64, total: UInt64, fraction: Double?)] = [:]
        var nextID: UInt32 = 1
        var count: UInt32 { shared + UInt32(live.count) }
    }

    typealias Name = ActivityObjectInterface

    static func progressProperties(_ values: (completed: UInt64, total: UInt64, fraction: Double?)) -> [String: Value] {
        let fraction = values.total > 0 ? Double(values.completed) / Double(values.total) : (values.fraction ?? -1)
        return [
            Name.completed.name.rawValue: .variant(.uint64(values.completed)), Name.total.name.rawValue: .variant(.uint64(values.total)),
            Name.fraction.name.rawValue: .variant(.double(fraction)), Name.rate.name.rawValue: .variant(.double(0)),
        ]
    }

    static func objectProperties(_ id: UInt32) -> [String: Value] {
        [
            Name.id.name.rawValue: .variant(.uint32(id)), Name.label.name.rawValue: .variant(.string("a\(id)")),
            Name.owner.name.rawValue: .variant(.string(":1.9")), Name.started.name.rawValue: .variant(.uint64(1)),
            Name.kind.name.rawValue: .variant(.string("download")),
        ].merging(progressProperties((0, 0, nil))) { $1 }
    }

    static func mainProperties(_ truth: Truth, visible: Bool) -> [String: Value] {
        [
            NetActivityInterface.active.name.rawValue: .variant(.boolean(truth.count > 0)),
            NetActivityInterface.visible.name.rawValue: .variant(.boolean(visible)),
            NetActivityInterface.count.name.rawValue: .variant(.uint32(truth.count)),
            // A throttled Progress that lags: the mirror must not show it against its list.
            NetActivityInterface.progress.name.rawValue: .variant(.double(0.123)),
        ]
    }

    @Test(arguments: 0..<40)
    func everyStateIsConsistentInItself(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var truth = Truth()
        var mirror = IndicatorMirror()
        mirror.loadObjects(.dictionary(key: "o", value: "a{sa{sv}}", []))
        mirror.loadMain(Self.mainProperties(truth, visible: false))
        var sharedAtLastCount: UInt32 = 0
        let main = NetActivityBus.path.rawValue
        let interface = NetActivityBus.interface.rawValue
        let activityInterface = NetActivityBus.activityInterface.rawValue

        for step in 0..<400 {
            switch random.next() % 9 {
            case 0:
                truth.shared += 1
            case 1 where truth.shared > 0:
                truth.shared -= 1
            case 2, 3:
                let id = truth.nextID
                truth.nextID += 1
                truth.live[id] = (0, 0, nil)
                _ = mirror.interfacesAdded(
                    path: NetActivityBus.activityPath(id).rawValue,
                    interfaces: [activityInterface: .properties(Self.objectProperties(id).map { ($0.key, $0.value) })])
            case 4 where !truth.live.isEmpty:
                let id = truth.live.keys.sorted()[Int(random.next() % UInt64(truth.live.count))]
                truth.live[id] = nil
                _ = mirror.interfacesRemoved(path: NetActivityBus.activityPath(id).rawValue, interfaces: [activityInterface])
            case 5 where !truth.live.isEmpty:
                let id = truth.live.keys.sorted()[Int(random.next() % UInt64(truth.live.count))]
                let total = random.next() % 4 == 0 ? 0 : 1 + random.next() % 1_000_000
                let completed = total > 0 ? random.next() % (total + 1) : random.next() % 1_000
                truth.live[id] = random.next() % 3 == 0
                    ? (0, 0, Double(random.next() % 101) / 100) : (completed, total, nil)
                // The object's progress may go out now, or later (its throttle), or never
                // (merged and dropped with the end).
                if random.next() % 2 == 0, let values = truth.live[id] {
                    _ = mirror.propertiesChanged(
                        path: NetActivityBus.activityPath(id).rawValue, interface: activityInterface,
                        changed: Self.progressProperties(values))
                }
            case 6 where !truth.live.isEmpty:
                // A progress signal held by the throttle goes out now, with the current values.
                let id = truth.live.keys.sorted()[Int(random.next() % UInt64(truth.live.count))]
                if let values = truth.live[id] {
                    _ = mirror.propertiesChanged(
                        path: NetActivityBus.activityPath(id).rawValue, interface: activityInterface,
                        changed: Self.progressProperties(values))
                }
            default:
                // The main object's throttled Count goes out, carrying the value of the moment.
                _ = mirror.propertiesChanged(
                    path: main, interface: interface, changed: Self.mainProperties(truth, visible: random.next() % 2 == 0))
                sharedAtLastCount = truth.shared
            }

            let state = mirror.snapshot
            let context = "seed \(seed), step \(step)"
            #expect(state.activities.map(\.id) == truth.live.keys.sorted(), "\(context): objects come and go at once")
            #expect(state.count == sharedAtLastCount + UInt32(state.activities.count), "\(context): \(state.count)")
            #expect(state.active == (state.count > 0), "\(context)")
            let aggregate = IndicatorSnapshot.progress(of: state.activities)
            #expect(state.progress == aggregate, "\(context): \(String(describing: state.progress)) vs \(String(describing: aggregate))")
            let line = SnapshotFormat.waybar(state)
            if let progress = state.progress {
                let percent = SnapshotFormat.wholePercent(progress)
                #expect(line.contains("\"percentage\":\(percent)"), "\(context): \(line)")
                if state.visible { #expect(line.contains(" \(percent)%"), "\(context): \(line)") }
            } else {
                #expect(!line.contains("percentage"), "\(context): \(line)")
            }
        }
    }
}
