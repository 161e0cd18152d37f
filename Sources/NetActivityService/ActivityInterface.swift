import DBus
import NetActivityContract
import NetActivityModel

/// The service's two interface tables, each declared once: dispatch, introspection,
/// `Properties`, `PropertiesChanged` and the ObjectManager's dictionaries all come from them.
extension Service {
    /// `io.github.netactivity.NetActivity1` on the main object.
    func makeInterface() -> Interface {
        typealias Member = NetActivityBus.Member
        typealias Name = NetActivityBus.Property
        return Interface(
            NetActivityBus.interface,
            methods: [
                Method(Member.push) { [unowned self] _ in
                    announce(try perform { indicator throws(LedgerError) in try indicator.push() })
                    return []
                },
                Method(Member.pop) { [unowned self] _ in
                    announce(try perform { indicator throws(LedgerError) in try indicator.pop() })
                    return []
                },
                Method(Member.beginActivity, inputs: [Argument("label", "s")], outputs: [Argument("id", "u")]) {
                    [unowned self] call in
                    [.uint32(try begin(owner: call.sender, label: call.arguments[0].string ?? ""))]
                },
                Method(
                    Member.beginActivityWithHints, inputs: [Argument("label", "s"), Argument("hints", "a{sv}")],
                    outputs: [Argument("id", "u")]
                ) { [unowned self] call in
                    let hints = try Self.hints(call.arguments[1])
                    return [.uint32(try begin(owner: call.sender, label: call.arguments[0].string ?? "", hints: hints))]
                },
                Method(Member.updateActivityFraction, inputs: [Argument("id", "u"), Argument("fraction", "d")]) {
                    [unowned self] call in
                    let id = call.arguments[0].uint32 ?? 0
                    let fraction = call.arguments[1].double ?? .nan
                    let owner = call.sender
                    announce(
                        try perform { indicator throws(LedgerError) in
                            try indicator.updateFraction(id, by: owner, fraction: fraction)
                        })
                    return []
                },
                Method(
                    Member.updateActivity,
                    inputs: [Argument("id", "u"), Argument("completed", "t"), Argument("total", "t")]
                ) { [unowned self] call in
                    let id = call.arguments[0].uint32 ?? 0
                    let completed = call.arguments[1].uint64 ?? 0
                    let total = call.arguments[2].uint64 ?? 0
                    let owner = call.sender
                    announce(
                        try perform { indicator throws(LedgerError) in
                            try indicator.update(id, by: owner, completed: completed, total: total)
                        })
                    return []
                },
                Method(Member.endActivity, inputs: [Argument("id", "u")]) { [unowned self] call in
                    try end(call.arguments[0].uint32 ?? 0, by: call.sender)
                    return []
                },
            ],
            properties: [
                Property(Name.active, "b") { [unowned self] in .boolean(indicator.ledger.isActive) },
                Property(Name.visible, "b") { [unowned self] in .boolean(indicator.isVisible) },
                Property(Name.count, "u") { [unowned self] in .uint32(indicator.ledger.count) },
                Property(Name.progress, "d") { [unowned self] in .double(indicator.ledger.progress) },
                Property(Name.rate, "d") { [unowned self] in .double(indicator.ledger.rate) },
                Property(Name.activities, "a(ussttt)", changeSignal: .invalidates) { [unowned self] in
                    Self.encode(indicator.ledger.activities)
                },
                Property(Name.version, "s", changeSignal: .constant) { .string(NetActivityBus.version) },
                Property(Name.interfaceVersion, "u", changeSignal: .constant) { .uint32(NetActivityBus.interfaceVersion) },
            ])
    }

    /// `io.github.netactivity.NetActivity1.Activity`: one table for every activity object, each
    /// getter handed the object asked for (`Subtree`): a table built for each lookup cost
    /// GetManagedObjects over 65,536 objects more than marshalling them (docs/benchmarks.md,
    /// "Scale").
    func makeActivityInterface() -> SubtreeInterface<DescribedActivity> {
        typealias Name = NetActivityBus.ActivityProperty
        typealias Property = SubtreeProperty<DescribedActivity>
        return SubtreeInterface(
            NetActivityBus.activityInterface,
            properties: [
                Property(Name.id, .uint32, changeSignal: .constant) { described in .uint32(described.activity.id) },
                Property(Name.label, .string, changeSignal: .constant) { described in .string(described.activity.label) },
                Property(Name.owner, .string, changeSignal: .constant) { described in .string(described.activity.owner) },
                Property(Name.started, .uint64, changeSignal: .constant) { described in .uint64(described.activity.started) },
                Property(Name.completed, .uint64) { described in .uint64(described.activity.completed) },
                Property(Name.total, .uint64) { described in .uint64(described.activity.total) },
                Property(Name.processID, .uint32) { described in
                    .uint32(described.attribution?.processID ?? NetActivityBus.unknownCredential)
                },
                Property(Name.userID, .uint32) { described in .uint32(described.attribution?.userID ?? NetActivityBus.unknownCredential) },
                Property(Name.application, .string) { described in .string(described.attribution?.application ?? "") },
                Property(Name.claimedApplication, .string, changeSignal: .constant) { described in
                    .string(described.activity.hints.application)
                },
                Property(Name.icon, .string, changeSignal: .constant) { described in .string(described.activity.hints.icon) },
                Property(Name.kind, .string, changeSignal: .constant) { described in .string(described.activity.hints.kind.rawValue) },
                Property(Name.fraction, .double) { described in .double(described.activity.fraction) },
                Property(Name.rate, .double) { described in .double(described.activity.rate) },
            ])
    }

    private static let activityStructure: Signature = "(ussttt)"

    /// `Activities` on the wire: `a(ussttt)`.
    static func encode(_ activities: [Activity]) -> Value {
        .array(
            element: activityStructure,
            activities.map {
                .structure([
                    .uint32($0.id), .string($0.owner), .string($0.label),
                    .uint64($0.completed), .uint64($0.total), .uint64($0.started),
                ])
            })
    }

    /// The main object's properties an announcement names, in a fixed order.
    static func names(_ announcement: Announcement) -> [MemberName] {
        typealias Name = NetActivityBus.Property
        var names: [MemberName] = []
        if announcement.active != nil { names.append(Name.active) }
        if announcement.visible != nil { names.append(Name.visible) }
        if announcement.count != nil { names.append(Name.count) }
        if announcement.progress != nil { names.append(Name.progress) }
        if announcement.rate != nil { names.append(Name.rate) }
        if announcement.activitiesChanged { names.append(Name.activities) }
        return names
    }

    /// An activity's progress is one signal (contract version 3).
    static let progressNames = [
        NetActivityBus.ActivityProperty.completed, NetActivityBus.ActivityProperty.total,
        NetActivityBus.ActivityProperty.fraction, NetActivityBus.ActivityProperty.rate,
    ]

    /// `BeginActivityWithHints`' hints: the known keys checked, unknown ones ignored (newer
    /// clients), nothing kept of the dictionary beyond the three values.
    ///
    /// - Throws: `InvalidArgs` naming the key, for a known hint of the wrong type or value.
    static func hints(_ dictionary: Value) throws(BusError) -> ActivityHints {
        typealias Hint = NetActivityBus.Hint
        var hints = ActivityHints()
        for entry in dictionary.elements ?? [] {
            guard case .dictEntry(let key, let wrapped) = entry, case .string(let name) = key,
                name == Hint.application || name == Hint.icon || name == Hint.kind
            else { continue }
            guard case .string(let text) = wrapped.unwrapped ?? wrapped else {
                let type = (wrapped.unwrapped ?? wrapped).signature
                throw BusError(.invalidArgs, "hint '\(name)' must be a string (s), not '\(type)'")
            }
            // Every entry is checked, so a valid duplicate cannot hide an invalid one.
            if name != Hint.kind, text.utf8.count > Hint.maximumBytes {
                throw BusError(
                    .invalidArgs, "hint '\(name)' is \(text.utf8.count) bytes; at most \(Hint.maximumBytes) are allowed")
            }
            switch name {
            case Hint.application: hints.application = text
            case Hint.icon: hints.icon = text
            default:
                guard let kind = ActivityKind(rawValue: text) else {
                    throw BusError(
                        .invalidArgs,
                        "hint 'kind' is '\(text.prefix(64))'; it must be one of \(Hint.kinds.joined(separator: ", "))")
                }
                hints.kind = kind
            }
        }
        return hints
    }
    static let attributionNames = [
        NetActivityBus.ActivityProperty.processID, NetActivityBus.ActivityProperty.userID,
        NetActivityBus.ActivityProperty.application,
    ]
}

// Made once: the activity table above is built for every activity object a call, a signal or
// GetManagedObjects touches, and a signature written as a literal is checked by libdbus each
// time it is made.
extension Signature {
    fileprivate static let uint32: Signature = "u"
    fileprivate static let uint64: Signature = "t"
    fileprivate static let string: Signature = "s"
    fileprivate static let double: Signature = "d"
}

/// An activity object as the activity table's getters are handed it: the activity, owned by a
/// client with `attribution` (nil: not known yet), as it was when looked up.
final class DescribedActivity {
    let activity: Activity
    let attribution: Attribution?

    init(_ activity: Activity, attribution: Attribution?) {
        self.activity = activity
        self.attribution = attribution
    }
}
