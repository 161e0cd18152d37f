import DBus
import NetActivityContract
import NetActivityModel

/// The service's two interface tables, bound to the contract's descriptors: dispatch,
/// introspection, `Properties`, `PropertiesChanged` and the ObjectManager's dictionaries all
/// come from them.
extension Service {
    /// `io.github.netactivity.NetActivity1` on the main object, bound to its descriptors;
    /// `announced` learns which announcement flag names each property.
    func makeInterface(announcing announced: inout AnnouncedProperties) -> Interface {
        typealias Main = NetActivityInterface
        return Main.descriptor.bind(
            methods: [
                Main.push.bind { [unowned self] _ in
                    announce(try perform { indicator throws(LedgerError) in try indicator.push() })
                    return NoReply()
                },
                Main.pop.bind { [unowned self] _ in
                    announce(try perform { indicator throws(LedgerError) in try indicator.pop() })
                    return NoReply()
                },
                Main.beginActivity.bind { [unowned self] call in
                    let label = try Self.arguments(Main.beginActivity, call)
                    return try begin(owner: call.sender, label: label)
                },
                Main.beginActivityWithHints.bind { [unowned self] call in
                    let (label, dictionary) = try Self.arguments(Main.beginActivityWithHints, call)
                    return try begin(owner: call.sender, label: label, hints: try Self.hints(dictionary))
                },
                Main.updateActivityFraction.bind { [unowned self] call in
                    let (id, fraction) = try Self.arguments(Main.updateActivityFraction, call)
                    let owner = call.sender
                    announce(
                        try perform { indicator throws(LedgerError) in
                            try indicator.updateFraction(id, by: owner, fraction: fraction)
                        })
                    return NoReply()
                },
                Main.updateActivity.bind { [unowned self] call in
                    let (id, completed, total) = try Self.arguments(Main.updateActivity, call)
                    let owner = call.sender
                    announce(
                        try perform { indicator throws(LedgerError) in
                            try indicator.update(id, by: owner, completed: completed, total: total)
                        })
                    return NoReply()
                },
                Main.endActivity.bind { [unowned self] call in
                    try end(try Self.arguments(Main.endActivity, call), by: call.sender)
                    return NoReply()
                },
            ],
            properties: [
                // Each read in place (`reading`): every change signal calls these getters.
                announced.bind(Main.active, when: { $0.active != nil }) { [unowned self] in
                    reading { $0.ledger.isActive }
                },
                announced.bind(Main.visible, when: { $0.visible != nil }) { [unowned self] in
                    reading { $0.isVisible }
                },
                announced.bind(Main.count, when: { $0.count != nil }) { [unowned self] in reading { $0.ledger.count } },
                announced.bind(Main.progress, when: { $0.progress != nil }) { [unowned self] in
                    reading { $0.ledger.progress }
                },
                announced.bind(Main.rate, when: { $0.rate != nil }) { [unowned self] in reading { $0.ledger.rate } },
                announced.bind(Main.activities, when: { $0.activitiesChanged }) { [unowned self] in
                    reading { $0.ledger.activities.map(ActivityEntry.init) }
                },
                Main.version.bind { NetActivityBus.version },
                Main.interfaceVersion.bind { NetActivityBus.interfaceVersion },
            ])
    }

    /// `io.github.netactivity.NetActivity1.Activity`: one table for every activity object, each
    /// getter handed the object asked for (`Subtree`), so `GetManagedObjects` over 65,536 objects
    /// builds no table per object, which would cost more than marshalling them
    /// (docs/benchmarks.md, "Scale").
    func makeActivityInterface() -> SubtreeInterface<DescribedActivity> {
        typealias Object = ActivityObjectInterface
        // Each property the activity holds is read at its declared key path; the owner's
        // attribution comes from the connection's credentials.
        let held = Object.properties.compactMap { $0.bind(through: \DescribedActivity.activity) }
        return Object.descriptor.bind(
            subtreeProperties: held + [
                Object.processID.bind(\.processID),
                Object.userID.bind(\.userID),
                Object.application.bind(\.application),
            ])
    }

    /// A call's arguments as `method` declares them. The object server has checked the call's
    /// signature, so this throws only if that check and the declaration ever disagree.
    static func arguments<Reply, each Input>(
        _ method: MethodDescriptor<Reply, repeat each Input>, _ call: borrowing MethodCall
    ) throws(BusError) -> (repeat each Input) {
        do {
            return try method.decode(call.arguments)
        } catch {
            throw BusError(.invalidArgs, "\(method.name) takes (\(method.declaration.inputSignature))")
        }
    }


    /// An activity's progress is one signal (contract version 3).
    static let progressNames = ActivityObjectInterface.progressNames

    /// `BeginActivityWithHints`' hints: the known keys checked, unknown ones ignored (newer
    /// clients), nothing kept of the dictionary beyond the three values.
    ///
    /// - Throws: `InvalidArgs` naming the key, for a known hint of the wrong type or value.
    static func hints(_ dictionary: VariantDictionary) throws(BusError) -> ActivityHints {
        typealias Hint = NetActivityBus.Hint
        var hints = ActivityHints()
        for entry in dictionary.value.elements ?? [] {
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

    /// What an owner's activity objects announce once the bus has told who the owner is.
    static let attributionNames = ActivityObjectInterface.attributionNames
}

/// Which of the main object's properties an `Announcement` names: each property bound with
/// the flag that says it changed, so a new property is announced from the line that binds it.
struct AnnouncedProperties {
    private var flags: [(name: MemberName, isNamed: (Announcement) -> Bool)] = []

    /// `descriptor` bound to `get`, named in a change signal whenever `isNamed` says so.
    mutating func bind<Type>(
        _ descriptor: PropertyDescriptor<Type>, when isNamed: @escaping (Announcement) -> Bool,
        _ get: @escaping () -> Type
    ) -> Property {
        flags.append((descriptor.name, isNamed))
        return descriptor.bind(get)
    }

    /// The properties `announcement` names, in the order they are declared.
    func names(_ announcement: Announcement) -> [MemberName] {
        var names: [MemberName] = []
        for flag in flags where flag.isNamed(announcement) { names.append(flag.name) }
        return names
    }
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

    /// The owner's process id, or the contract's unknown value while the bus has not said it.
    var processID: UInt32 { attribution?.processID ?? NetActivityBus.unknownCredential }
    /// The owner's user id, likewise.
    var userID: UInt32 { attribution?.userID ?? NetActivityBus.unknownCredential }
    /// The owner's application; "" while unknown.
    var application: String { attribution?.application ?? "" }
}
