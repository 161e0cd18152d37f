import DBus
import NetActivityContract
import Testing

@testable import NetActivity

/// The client's incremental copy of the service's state, fed the bodies of the contract's
/// replies and signals (version 2: activity objects under an ObjectManager).
@Suite struct IndicatorMirrorTests {
    typealias Name = ActivityObjectInterface

    static func dictionary(_ entries: [String: Value]) -> Value {
        .properties(entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    static func activityProperties(_ id: UInt32, _ label: String, completed: UInt64 = 0, total: UInt64 = 0) -> [String: Value] {
        [
            Name.id.name.rawValue: .uint32(id), Name.label.name.rawValue: .string(label), Name.owner.name.rawValue: .string(":1.7"),
            Name.started.name.rawValue: .uint64(1_000), Name.completed.name.rawValue: .uint64(completed),
            Name.total.name.rawValue: .uint64(total), Name.processID.name.rawValue: .uint32(NetActivityBus.unknownCredential),
            Name.userID.name.rawValue: .uint32(NetActivityBus.unknownCredential), Name.application.name.rawValue: .string(""),
        ]
    }

    static func interfaces(_ properties: [String: Value]) -> [String: Value] {
        [NetActivityBus.activityInterface.rawValue: dictionary(properties)]
    }

    static func managedObjects(_ objects: [(UInt32, [String: Value])]) -> Value {
        .dictionary(key: "o", value: "a{sa{sv}}", objects.map { id, properties in
            (
                .objectPath(NetActivityBus.activityPath(id)),
                .dictionary(key: "s", value: "a{sv}", [
                    (.string(NetActivityBus.activityInterface.rawValue), dictionary(properties))
                ])
            )
        })
    }

    static let mainState: [String: Value] = [
        NetActivityInterface.active.name.rawValue: .variant(.boolean(true)),
        NetActivityInterface.visible.name.rawValue: .variant(.boolean(false)),
        NetActivityInterface.count.name.rawValue: .variant(.uint32(2)),
        NetActivityInterface.progress.name.rawValue: .variant(.double(0.25)),
        // A version 2 service still answers Get/GetAll with the list; the mirror follows the objects.
        NetActivityInterface.activities.name.rawValue: .variant(.array(element: "(ussttt)", [])),
    ]

    func loaded() -> IndicatorMirror {
        var mirror = IndicatorMirror()
        mirror.loadObjects(Self.managedObjects([
            (9, Self.activityProperties(9, "nine", completed: 1, total: 4)),
            (3, Self.activityProperties(3, "three")),
        ]))
        mirror.loadMain(Self.mainState)
        return mirror
    }

    @Test func aRebuildFromGetManagedObjectsAndGetAllIsSortedAndComplete() {
        var mirror = IndicatorMirror()
        mirror.loadMain(Self.mainState)
        expectFalse(mirror.isComplete, "nothing is shown until both replies are in")
        mirror = loaded()
        #expect(mirror.isComplete)
        let state = mirror.snapshot
        #expect(state.active && !state.visible && state.count == 2 && state.progress == 0.25)
        #expect(state.activities.map(\.id) == [3, 9])
        #expect(state.activities[1].label == "nine" && state.activities[1].completed == 1 && state.activities[1].total == 4)
        #expect(state.activities[1].processID == nil && state.activities[1].userID == nil, "unknown credentials read as nil")
    }

    @Test func interfacesAddedAndRemovedChangeOneActivity() {
        var mirror = loaded()
        let path = NetActivityBus.activityPath(12).rawValue
        expectTrue(mirror.interfacesAdded(path: path, interfaces: Self.interfaces(Self.activityProperties(12, "twelve"))))
        expectTrue(mirror.interfacesAdded(path: NetActivityBus.activityPath(5).rawValue, interfaces: Self.interfaces(Self.activityProperties(5, "five"))))
        #expect(mirror.snapshot.activities.map(\.id) == [3, 5, 9, 12])
        expectFalse(mirror.interfacesAdded(path: path, interfaces: Self.interfaces(Self.activityProperties(12, "twelve"))), "repeated: no change")
        expectTrue(mirror.interfacesRemoved(path: NetActivityBus.activityPath(9).rawValue, interfaces: [NetActivityBus.activityInterface.rawValue]))
        #expect(mirror.snapshot.activities.map(\.id) == [3, 5, 12])
        expectFalse(mirror.interfacesRemoved(path: NetActivityBus.activityPath(9).rawValue, interfaces: [NetActivityBus.activityInterface.rawValue]))
        expectFalse(mirror.interfacesRemoved(path: NetActivityBus.activityPath(3).rawValue, interfaces: ["org.example.Other"]))
        expectFalse(mirror.interfacesAdded(path: "/elsewhere/1", interfaces: Self.interfaces(Self.activityProperties(1, "x"))))
    }

    @Test func propertiesChangedOnAnActivityObjectUpdatesItAlone() {
        var mirror = loaded()
        let path = NetActivityBus.activityPath(9).rawValue
        let iface = NetActivityBus.activityInterface.rawValue
        expectTrue(mirror.propertiesChanged(path: path, interface: iface, changed: [
            Name.completed.name.rawValue: .variant(.uint64(3)), Name.total.name.rawValue: .variant(.uint64(4)),
        ]))
        expectTrue(mirror.propertiesChanged(path: path, interface: iface, changed: [
            Name.processID.name.rawValue: .variant(.uint32(4242)), Name.userID.name.rawValue: .variant(.uint32(1000)),
            Name.application.name.rawValue: .variant(.string("org.example.Feeds")),
        ]))
        let nine = mirror.snapshot.activities[1]
        #expect(nine.completed == 3 && nine.processID == 4242 && nine.userID == 1000 && nine.application == "org.example.Feeds")
        #expect(mirror.snapshot.activities[0] == IndicatorMirror.activity(id: 3, Self.activityProperties(3, "three")))
        expectFalse(mirror.propertiesChanged(path: path, interface: iface, changed: [Name.completed.name.rawValue: .variant(.string("bad"))]),
            "a mistyped value is ignored")
        expectFalse(mirror.propertiesChanged(path: NetActivityBus.activityPath(77).rawValue, interface: iface, changed: [
            Name.completed.name.rawValue: .variant(.uint64(1)),
        ]), "an unknown object changes nothing")
    }

    @Test func countActiveAndProgressAreDerivedFromTheListAndTheSharedCounter() {
        var mirror = loaded()
        let before = mirror.snapshot
        // A throttled Count that lags the objects cannot undercount them, nor a Progress
        // disagree with them.
        let changed = mirror.propertiesChanged(
            path: NetActivityBus.path.rawValue, interface: NetActivityBus.interface.rawValue,
            changed: [
                NetActivityInterface.active.name.rawValue: .variant(.boolean(false)),
                NetActivityInterface.count.name.rawValue: .variant(.uint32(0)),
                NetActivityInterface.progress.name.rawValue: .variant(.double(-1)),
                NetActivityInterface.activities.name.rawValue: .variant(.array(element: "(ussttt)", [])),
            ])
        expectFalse(changed)
        #expect(mirror.snapshot == before)
        #expect(mirror.snapshot.activities.count == 2, "the list follows the objects only")
        #expect(mirror.snapshot.count == 2 && mirror.snapshot.active)
        // Three pushes on top of the two listed activities.
        let pushed = mirror.propertiesChanged(
            path: NetActivityBus.path.rawValue, interface: NetActivityBus.interface.rawValue,
            changed: [NetActivityInterface.count.name.rawValue: .variant(.uint32(5))])
        #expect(pushed)
        #expect(mirror.snapshot.count == 5)
        let removed = mirror.interfacesRemoved(
            path: NetActivityBus.activityPath(3).rawValue, interfaces: [NetActivityBus.activityInterface.rawValue])
        #expect(removed)
        #expect(mirror.snapshot.count == 4, "the shared counter stays while an object goes")
        #expect(mirror.snapshot.progress == IndicatorSnapshot.progress(of: mirror.snapshot.activities))
    }

    @Test func signalsBeforeTheirReplyAreIgnored() {
        var mirror = IndicatorMirror()
        expectFalse(mirror.interfacesAdded(path: NetActivityBus.activityPath(1).rawValue, interfaces: Self.interfaces(Self.activityProperties(1, "early"))))
        expectFalse(mirror.propertiesChanged(path: NetActivityBus.path.rawValue, interface: NetActivityBus.interface.rawValue, changed: [
            NetActivityInterface.count.name.rawValue: .variant(.uint32(5)),
        ]))
        mirror.loadObjects(Self.managedObjects([]))
        mirror.loadMain([:])
        #expect(mirror.snapshot.activities.isEmpty && mirror.snapshot.count == 0)
    }

    @Test func aVersion1ServiceIsFollowedThroughItsActivitiesProperty() {
        var mirror = IndicatorMirror()
        mirror.useActivitiesProperty()
        let entry = Value.structure([.uint32(4), .string(":1.3"), .string("old"), .uint64(1), .uint64(2), .uint64(3)])
        var state = Self.mainState
        state[NetActivityInterface.activities.name.rawValue] = .variant(.array(element: "(ussttt)", [entry]))
        mirror.loadMain(state)
        #expect(mirror.isComplete)
        #expect(mirror.snapshot.activities.map(\.label) == ["old"])
        expectTrue(mirror.propertiesChanged(path: NetActivityBus.path.rawValue, interface: NetActivityBus.interface.rawValue, changed: [
            NetActivityInterface.activities.name.rawValue: .variant(.array(element: "(ussttt)", [])),
        ]))
        #expect(mirror.snapshot.activities.isEmpty)
    }
}

/// `#expect` for a value computed by a mutating call, which the macro cannot take.
private func expectTrue(_ value: Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value, comment, sourceLocation: sourceLocation)
}

private func expectFalse(_ value: Bool, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!value, comment, sourceLocation: sourceLocation)
}
