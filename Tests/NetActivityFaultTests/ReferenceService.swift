import DBus
import NetActivityContract

/// What docs/interface.md says the service must answer, computed independently of the service: the
/// fuzz test runs every call through this model, in the order the service handles them, and
/// compares the replies.
struct ReferenceService {
    struct Activity: Equatable {
        var owner: String
        var label: String
        var completed: UInt64 = 0
        var total: UInt64 = 0
        /// Set in fraction mode.
        var fraction: Double?
    }

    /// The outcome the contract requires for one call.
    enum Outcome: Equatable, CustomStringConvertible {
        /// A method return; `values` checks its arguments (nil: anything goes).
        case reply(check: Check)
        /// An error reply with one of these names.
        case error(Set<ErrorName>)

        var description: String {
            switch self {
            case .reply(let check): "a reply (\(check))"
            case .error(let names): "an error " + names.map(\.rawValue).sorted().joined(separator: " or ")
            }
        }
    }

    /// How to check a successful reply's arguments.
    enum Check: Equatable, CustomStringConvertible {
        case empty
        case newActivityID
        /// `Properties.Get` of `name`: a variant holding `value`.
        case property(name: String, value: Value)
        case properties([String: Value])
        case introspection(mentioning: String)
        case machineID

        var description: String {
            switch self {
            case .empty: "no arguments"
            case .newActivityID: "a new activity id"
            case .property(let name, let value): "\(name) = \(value)"
            case .properties: "every property"
            case .introspection(let text): "XML mentioning \(text)"
            case .machineID: "a machine id"
            }
        }
    }

    static let objectPath = NetActivityBus.path
    /// The nodes above the object, which answer Introspect (and Peer).
    static let ancestors: Set<ObjectPath> = ["/", "/io", "/io/github", "/io/github/netactivity"]
    static let propertyNames = [
        "Active", "Visible", "Count", "Progress", "Rate", "Activities", "Version", "InterfaceVersion",
    ]
    static let maximumHintBytes = 255
    static let kinds: Set<String> = ["download", "upload", "sync", "update", "other"]
    static let maximumSharedCount: UInt32 = 65_536
    static let maximumLabelBytes = 256
    static let maximumActivitiesPerOwner = 1_024

    /// Every method the object answers, by interface: the input signature.
    static let methods: [InterfaceName: [MemberName: Signature]] = [
        NetActivityBus.interface: [
            "Push": "", "Pop": "", "BeginActivity": "s", "UpdateActivity": "utt", "EndActivity": "u",
            "BeginActivityWithHints": "sa{sv}", "UpdateActivityFraction": "ud",
        ],
        .properties: ["Get": "ss", "GetAll": "s", "Set": "ssv"],
        .introspectable: ["Introspect": ""],
        .peer: ["Ping": "", "GetMachineId": ""],
    ]

    private(set) var sharedCount: UInt32 = 0
    private(set) var live: [UInt32: Activity] = [:] {
        didSet { liveIDsCache = nil }
    }
    private var activitiesByOwner: [String: Int] = [:]
    private var liveIDsCache: [UInt32]?
    private(set) var highestID: UInt32 = 0
    /// Ids that were live once and have ended (or whose owner left).
    private(set) var ended: [UInt32] = []

    var count: UInt32 { sharedCount + UInt32(live.count) }

    func activityCount(owner: String) -> Int {
        activitiesByOwner[owner, default: 0]
    }

    /// The live ids in order; cached, as the fuzzer asks for them on every call.
    mutating func liveIDs() -> [UInt32] {
        if let liveIDsCache { return liveIDsCache }
        let ids = live.keys.sorted()
        liveIDsCache = ids
        return ids
    }

    /// `Activities` as the service must publish it, sorted by id, `started` left out.
    var activities: [(id: UInt32, activity: Activity)] {
        live.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    // MARK: - Dispatch, as the contract orders it

    /// The outcome of a call, without applying it.
    func outcome(of call: Message, sender: String) -> Outcome {
        guard let path = call.path, let member = call.member else { return .error([.unknownMethod]) }
        let interfaces: [InterfaceName]
        if path == Self.objectPath {
            interfaces = [NetActivityBus.interface, .properties, .introspectable, .peer]
        } else if Self.ancestors.contains(path) {
            interfaces = [.introspectable, .peer]
        } else {
            // docs/interface.md does not name an error for a path with no object; the service answers
            // as sd-bus and the bus daemon do.
            return .error([.unknownObject])
        }
        let signature: Signature
        if let interface = call.interface {
            guard interfaces.contains(interface) else { return .error([.unknownInterface, .unknownMethod]) }
            guard let found = Self.methods[interface]?[member] else { return .error([.unknownMethod]) }
            signature = found
        } else {
            guard let found = interfaces.lazy.compactMap({ Self.methods[$0]?[member] }).first else {
                return .error([.unknownMethod])
            }
            signature = found
        }
        guard call.signature == signature else { return .error([.invalidArgs]) }
        let arguments = (try? call.arguments()) ?? []
        return semantics(of: member, arguments, at: path, sender: sender)
    }

    private func semantics(
        of member: MemberName, _ arguments: [Value], at path: ObjectPath, sender: String
    ) -> Outcome {
        switch member.rawValue {
        case "Push":
            return sharedCount < Self.maximumSharedCount ? .reply(check: .empty) : .error([.limitsExceeded])
        case "Pop":
            return sharedCount > 0 ? .reply(check: .empty) : .error([.notActive])
        case "BeginActivity", "BeginActivityWithHints":
            let label = arguments[0].string ?? ""
            if label.utf8.count > Self.maximumLabelBytes { return .error([.invalidArgs]) }
            if member == "BeginActivityWithHints", !Self.hintsAreValid(arguments[1]) { return .error([.invalidArgs]) }
            if activityCount(owner: sender) >= Self.maximumActivitiesPerOwner { return .error([.limitsExceeded]) }
            return .reply(check: .newActivityID)
        case "UpdateActivity":
            if let refusal = refusal(of: arguments[0].uint32 ?? 0, sender: sender) { return refusal }
            let completed = arguments[1].uint64 ?? 0
            let total = arguments[2].uint64 ?? 0
            return total > 0 && completed > total ? .error([.invalidArgs]) : .reply(check: .empty)
        case "UpdateActivityFraction":
            if let refusal = refusal(of: arguments[0].uint32 ?? 0, sender: sender) { return refusal }
            let fraction = arguments[1].double ?? .nan
            return fraction.isFinite && fraction >= 0 && fraction <= 1 ? .reply(check: .empty) : .error([.invalidArgs])
        case "EndActivity":
            return refusal(of: arguments[0].uint32 ?? 0, sender: sender) ?? .reply(check: .empty)
        case "Get", "Set":
            guard Self.knowsInterface(arguments[0].string ?? "") else { return .error([.unknownInterface]) }
            let name = arguments[1].string ?? ""
            guard let value = property(name) else { return .error([.unknownProperty]) }
            return member == "Get" ? .reply(check: .property(name: name, value: value)) : .error([.propertyReadOnly])
        case "GetAll":
            guard Self.knowsInterface(arguments[0].string ?? "") else { return .error([.unknownInterface]) }
            var all: [String: Value] = [:]
            for name in Self.propertyNames { all[name] = property(name) }
            return .reply(check: .properties(all))
        case "Introspect":
            if path == Self.objectPath {
                return .reply(check: .introspection(mentioning: NetActivityBus.interface.rawValue))
            }
            let child = Self.objectPath.elements[path.elements.count]
            return .reply(check: .introspection(mentioning: "<node name=\"\(child)\"/>"))
        case "Ping":
            return .reply(check: .empty)
        case "GetMachineId":
            return .reply(check: .machineID)
        default:
            return .error([.unknownMethod])
        }
    }

    /// libdbus answers calls on `org.freedesktop.DBus.Peer` before any handler sees them
    /// (unless `dbus_connection_set_route_peer_messages` is set): Ping and GetMachineId
    /// succeed on every path whatever their arguments; other members get UnknownMethod.
    static func libdbusPeerOutcome(of call: Message) -> Outcome? {
        guard call.interface == .peer else { return nil }
        switch call.member?.rawValue {
        case "Ping": return .reply(check: .empty)
        case "GetMachineId": return .reply(check: .machineID)
        default: return .error([.unknownMethod])
        }
    }

    /// The contract's hints: every key optional, unknown ones ignored; `application` and `icon`
    /// strings of at most 255 bytes, `kind` one of five strings.
    static func hintsAreValid(_ hints: Value) -> Bool {
        for entry in hints.elements ?? [] {
            guard case .dictEntry(.string(let key), let wrapped) = entry else { continue }
            let value = wrapped.unwrapped ?? wrapped
            switch key {
            case "application", "icon":
                guard case .string(let text) = value, text.utf8.count <= Self.maximumHintBytes else { return false }
            case "kind":
                guard case .string(let text) = value, Self.kinds.contains(text) else { return false }
            default:
                continue
            }
        }
        return true
    }

    private func refusal(of id: UInt32, sender: String) -> Outcome? {
        guard let activity = live[id] else { return .error([.unknownActivity]) }
        return activity.owner == sender ? nil : .error([.accessDenied])
    }

    /// Properties.Get/GetAll/Set name the interface, or "" for any.
    private static func knowsInterface(_ name: String) -> Bool {
        name.isEmpty || name == NetActivityBus.interface.rawValue
    }

    /// A property's value as the service must report it; nil for an unknown name. `Visible`
    /// follows timers, so any boolean is right; `Activities` leaves out `started`.
    func property(_ name: String) -> Value? {
        switch name {
        case "Active": .boolean(count > 0)
        case "Visible": .boolean(false)
        case "Count": .uint32(count)
        case "Progress": .double(progress)
        case "Rate": .double(0)
        case "InterfaceVersion": .uint32(3)
        case "Activities":
            .array(
                element: "(ussttt)",
                activities.map { id, activity in
                    .structure([
                        .uint32(id), .string(activity.owner), .string(activity.label),
                        .uint64(activity.completed), .uint64(activity.total), .uint64(0),
                    ])
                })
        case "Version": .string(NetActivityBus.version)
        default: nil
        }
    }

    /// Version 3's aggregate, worked out afresh over every live activity.
    private var progress: Double {
        var completed: UInt128 = 0
        var total: UInt128 = 0
        var byteActivities = 0
        var fractions: [Double] = []
        for activity in live.values {
            if activity.total > 0 {
                completed += UInt128(activity.completed)
                total += UInt128(activity.total)
                byteActivities += 1
            } else if let fraction = activity.fraction {
                fractions.append(fraction)
            }
        }
        guard !fractions.isEmpty else { return total == 0 ? -1.0 : Double(completed) / Double(total) }
        let weight = byteActivities > 0 ? Double(total) / Double(byteActivities) : 1
        return (Double(completed) + weight * fractions.reduce(0, +)) / (Double(total) + weight * Double(fractions.count))
    }

    // MARK: - Applying

    /// Applies the effect of a call the service answered with `reply`, which must match
    /// `outcome(of:sender:)`.
    mutating func apply(_ call: Message, sender: String, reply: Message) {
        guard reply.kind == .methodReturn, let member = call.member?.rawValue,
            call.path == Self.objectPath, call.interface == nil || call.interface == NetActivityBus.interface
        else { return }
        let arguments = (try? call.arguments()) ?? []
        switch member {
        case "Push": sharedCount += 1
        case "Pop": sharedCount -= 1
        case "BeginActivity", "BeginActivityWithHints":
            guard let id = (try? reply.arguments())?.first?.uint32 else { return }
            highestID = max(highestID, id)
            live[id] = Activity(owner: sender, label: arguments[0].string ?? "")
            activitiesByOwner[sender, default: 0] += 1
        case "UpdateActivity":
            guard let id = arguments[0].uint32 else { return }
            live[id]?.completed = arguments[1].uint64 ?? 0
            live[id]?.total = arguments[2].uint64 ?? 0
            live[id]?.fraction = nil
        case "UpdateActivityFraction":
            guard let id = arguments[0].uint32 else { return }
            live[id]?.completed = 0
            live[id]?.total = 0
            live[id]?.fraction = arguments[1].double
        case "EndActivity":
            guard let id = arguments[0].uint32, let activity = live.removeValue(forKey: id) else { return }
            activitiesByOwner[activity.owner, default: 0] -= 1
            ended.append(id)
        default:
            break
        }
    }

    /// The owner left the bus: its activities end, the shared counter stays.
    mutating func release(owner: String) {
        for (id, activity) in live where activity.owner == owner {
            live[id] = nil
            ended.append(id)
        }
        activitiesByOwner[owner] = nil
    }
}
