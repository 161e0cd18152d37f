import NetActivity
import DBus

/// The exported `org.kde.StatusNotifierItem` object: the interface table bound to its
/// declaration (`StatusNotifierInterface`), whose getters read the current appearance, and the
/// change signals for `show(_:)`.
///
/// Lives on the tray's event-loop thread, like the `ObjectServer` it is exported on.
final class StatusNotifierItem {
    private typealias Item = StatusNotifierInterface

    private let server: ObjectServer
    private let options: TrayOptions
    /// What the item shows now; the property getters read it.
    private(set) var appearance: TrayAppearance
    /// `IconPixmap`: the ring drawn for `appearance.ring` at every size, or no pixmaps. Drawn
    /// and encoded once per change of the percent, not per read.
    private var iconPixmap: IconPixmaps

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
        let path = StatusNotifierNames.itemPath
        for change in changes {
            switch change {
            case .status(let status): try server.emit(Item.newStatus, status.rawValue, at: path)
            case .icon: try server.emit(Item.newIcon, at: path)
            case .toolTip: try server.emit(Item.newToolTip, at: path)
            }
        }
    }

    /// The pictures of the ring at `ring` percent, none without one.
    private static func pixmaps(ring: Int?) -> IconPixmaps {
        IconPixmaps(ring.map(ProgressRing.pixmaps) ?? [])
    }

    // MARK: - The interface table

    private var interface: Interface {
        // The item has nothing to open: a click answers and changes nothing.
        Item.item.bind(
            methods: [
                Item.activate.bind { _ in NoReply() },
                Item.secondaryActivate.bind { _ in NoReply() },
                Item.contextMenu.bind { _ in NoReply() },
                Item.scroll.bind { _ in NoReply() },
            ],
            properties: [
                Item.category.bind { "ApplicationStatus" },
                Item.id.bind { "netactivity" },
                Item.title.bind { TrayAppearance.title },
                Item.status.bind { [unowned self] in appearance.status.rawValue },
                Item.windowID.bind { 0 },
                Item.iconThemePath.bind { [options] in options.iconThemePath },
                Item.menu.bind { StatusNotifierNames.noMenu },
                Item.itemIsMenu.bind { false },
                Item.iconName.bind { [unowned self] in appearance.iconName },
                Item.iconPixmap.bind { [unowned self] in iconPixmap },
                Item.overlayIconName.bind { "" },
                Item.overlayIconPixmap.bind { IconPixmaps.none },
                Item.attentionIconName.bind { [options] in options.activeIcon },
                Item.attentionIconPixmap.bind { IconPixmaps.none },
                Item.attentionMovieName.bind { "" },
                Item.toolTip.bind { [unowned self] in
                    StatusNotifierToolTip(title: appearance.toolTip.title, description: appearance.toolTip.description)
                },
            ])
    }
}
