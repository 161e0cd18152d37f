import NetActivity
import DBus

/// The exported `org.kde.StatusNotifierItem` object: one interface table whose getters read
/// the current appearance, and the change signals for `show(_:)`.
///
/// Lives on the tray's event-loop thread, like the `ObjectServer` it is exported on.
final class StatusNotifierItem {
    private let server: ObjectServer
    private let options: TrayOptions
    /// What the item shows now; the property getters read it.
    private(set) var appearance: TrayAppearance
    /// `IconPixmap`: the ring drawn for `appearance.ring` at every size, or no pixmaps. Drawn
    /// once per change of the percent, not per read.
    private var iconPixmap: Value

    /// Exports the item at `/StatusNotifierItem` on `server`, showing `initial`.
    init(server: ObjectServer, options: TrayOptions, initial: TrayAppearance) {
        self.server = server
        self.options = options
        self.appearance = initial
        iconPixmap = Self.pixmaps(ring: initial.ring)
        server.export([interface], at: StatusNotifierNames.itemPath)
    }

    /// Shows `next`, emitting `NewStatus`, `NewIcon` and `NewToolTip` for what really changed.
    ///
    /// - Throws: `BusError` if a signal could not be queued (the connection is gone).
    func show(_ next: TrayAppearance) throws(BusError) {
        let changes = appearance.changes(to: next)
        if next.ring != appearance.ring { iconPixmap = Self.pixmaps(ring: next.ring) }
        appearance = next
        for change in changes {
            switch change {
            case .status(let status): try emit("NewStatus", [.string(status.rawValue)])
            case .icon: try emit("NewIcon")
            case .toolTip: try emit("NewToolTip")
            }
        }
    }

    private func emit(_ member: MemberName, _ arguments: [Value] = []) throws(BusError) {
        try server.emit(member, interface: StatusNotifierNames.itemInterface, at: StatusNotifierNames.itemPath, arguments: arguments)
    }

    /// The `a(iiay)` value of the ring at `ring` percent, empty without one.
    static func pixmaps(ring: Int?) -> Value {
        let pictures = ring.map(ProgressRing.pixmaps) ?? []
        return .array(
            element: "(iiay)",
            pictures.map { picture in
                .structure([
                    .int32(Int32(picture.width)), .int32(Int32(picture.height)),
                    .array(element: "y", picture.bytes.map(Value.byte)),
                ])
            })
    }

    // MARK: - The interface table

    private var interface: Interface {
        // Changing properties are announced by the specification's own New* signals, not by
        // PropertiesChanged; hosts re-read them when the signal arrives.
        func fixed(_ name: MemberName, _ type: Signature, _ value: Value) -> Property {
            Property(name, type, changeSignal: .constant) { value }
        }
        func live(_ name: MemberName, _ type: Signature, _ value: @escaping (TrayAppearance) -> Value) -> Property {
            Property(name, type, changeSignal: .none) { [unowned self] in value(self.appearance) }
        }
        let noPixmaps = Value.array(element: "(iiay)", [])
        let position = [Argument("x", "i"), Argument("y", "i")]
        return Interface(
            StatusNotifierNames.itemInterface,
            methods: [
                // The item has nothing to open: a click answers and changes nothing.
                Method("Activate", inputs: position) { _ in [] },
                Method("SecondaryActivate", inputs: position) { _ in [] },
                Method("ContextMenu", inputs: position) { _ in [] },
                Method("Scroll", inputs: [Argument("delta", "i"), Argument("orientation", "s")]) { _ in [] },
            ],
            properties: [
                fixed("Category", "s", .string("ApplicationStatus")),
                fixed("Id", "s", .string("netactivity")),
                fixed("Title", "s", .string(TrayAppearance.title)),
                live("Status", "s") { .string($0.status.rawValue) },
                fixed("WindowId", "i", .int32(0)),
                fixed("IconThemePath", "s", .string("")),
                fixed("Menu", "o", .objectPath(StatusNotifierNames.noMenu)),
                fixed("ItemIsMenu", "b", .boolean(false)),
                live("IconName", "s") { .string($0.iconName) },
                Property("IconPixmap", "a(iiay)", changeSignal: .none) { [unowned self] in iconPixmap },
                fixed("OverlayIconName", "s", .string("")),
                fixed("OverlayIconPixmap", "a(iiay)", noPixmaps),
                fixed("AttentionIconName", "s", .string(options.activeIcon)),
                fixed("AttentionIconPixmap", "a(iiay)", noPixmaps),
                fixed("AttentionMovieName", "s", .string("")),
                live("ToolTip", "(sa(iiay)ss)") { appearance in
                    .structure([
                        .string(""), noPixmaps, .string(appearance.toolTip.title),
                        .string(appearance.toolTip.description),
                    ])
                },
            ],
            signals: [
                SignalDescription("NewTitle"),
                SignalDescription("NewIcon"),
                SignalDescription("NewAttentionIcon"),
                SignalDescription("NewOverlayIcon"),
                SignalDescription("NewToolTip"),
                SignalDescription("NewStatus", arguments: [Argument("status", "s")]),
            ])
    }
}
