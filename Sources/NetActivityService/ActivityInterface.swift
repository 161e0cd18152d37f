import DBus
import NetActivityContract
import NetActivityModel

/// The `io.github.netactivity.NetActivity1` interface table: every method and property of
/// CONTRACT.md, bound to a `Service`.
extension Service {
    func makeInterface() -> Interface {
        Interface(
            NetActivityBus.interface,
            methods: [
                Method("Push") { [unowned self] _ in
                    try self.mutate { indicator throws(LedgerError) in try indicator.push() }
                    return []
                },
                Method("Pop") { [unowned self] _ in
                    try self.mutate { indicator throws(LedgerError) in try indicator.pop() }
                    return []
                },
                Method("BeginActivity", inputs: [Argument("label", "s")], outputs: [Argument("id", "u")]) {
                    [unowned self] call in
                    let label = call.arguments[0].string ?? ""
                    var id: ActivityID = 0
                    try self.mutate { indicator throws(LedgerError) in
                        let begun = try indicator.begin(owner: call.sender, label: label)
                        id = begun.id
                        return begun.announcement
                    }
                    return [.uint32(id)]
                },
                Method(
                    "UpdateActivity",
                    inputs: [Argument("id", "u"), Argument("completed", "t"), Argument("total", "t")]
                ) { [unowned self] call in
                    let id = call.arguments[0].uint32 ?? 0
                    let completed = call.arguments[1].uint64 ?? 0
                    let total = call.arguments[2].uint64 ?? 0
                    try self.mutate { indicator throws(LedgerError) in
                        try indicator.update(id, by: call.sender, completed: completed, total: total)
                    }
                    return []
                },
                Method("EndActivity", inputs: [Argument("id", "u")]) { [unowned self] call in
                    let id = call.arguments[0].uint32 ?? 0
                    try self.mutate { indicator throws(LedgerError) in try indicator.end(id, by: call.sender) }
                    return []
                },
            ],
            properties: [
                Property("Active", "b") { [unowned self] in .boolean(self.indicator.ledger.isActive) },
                Property("Visible", "b") { [unowned self] in .boolean(self.indicator.isVisible) },
                Property("Count", "u") { [unowned self] in .uint32(self.indicator.ledger.count) },
                Property("Progress", "d") { [unowned self] in .double(self.indicator.ledger.progress) },
                Property("Activities", "a(ussttt)") { [unowned self] in
                    Self.encode(self.indicator.ledger.activities)
                },
                Property("Version", "s", changeSignal: .constant) { .string(NetActivityBus.version) },
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

    /// The `PropertiesChanged` payload for an announcement, in a fixed order.
    static func changes(_ announcement: Announcement) -> [(MemberName, Value)] {
        var changed: [(MemberName, Value)] = []
        if let active = announcement.active { changed.append((.active, .boolean(active))) }
        if let visible = announcement.visible { changed.append((.visible, .boolean(visible))) }
        if let count = announcement.count { changed.append((.count, .uint32(count))) }
        if let progress = announcement.progress { changed.append((.progress, .double(progress))) }
        if let activities = announcement.activities { changed.append((.activities, encode(activities))) }
        return changed
    }
}

// The changing properties' names as constants: a literal would be validated on every signal.
extension MemberName {
    fileprivate static let active: MemberName = "Active"
    fileprivate static let visible: MemberName = "Visible"
    fileprivate static let count: MemberName = "Count"
    fileprivate static let progress: MemberName = "Progress"
    fileprivate static let activities: MemberName = "Activities"
}
