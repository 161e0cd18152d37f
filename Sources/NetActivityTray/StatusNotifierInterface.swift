import DBus

/// The StatusNotifierItem specification's interfaces as far as the tray uses them, declared
/// with the typed descriptors NetActivity's own interface is declared with: the item's table
/// (dispatch, introspection, `Properties`) is bound to `item`, its change signals are emitted
/// through their descriptors, and the watcher's registration is called through its descriptor.
public enum StatusNotifierInterface {
    /// `org.kde.StatusNotifierItem`, its members in the order the tray exports them.
    public static let item = InterfaceDescriptor(
        StatusNotifierNames.itemInterface,
        doc: "An item a tray host shows: its icon, status and tooltip, and what clicks on it do.",
        methods: [activate.declaration, secondaryActivate.declaration, contextMenu.declaration, scroll.declaration],
        properties: [
            category.declaration, id.declaration, title.declaration, status.declaration, windowID.declaration,
            iconThemePath.declaration, menu.declaration, itemIsMenu.declaration, iconName.declaration,
            iconPixmap.declaration, overlayIconName.declaration, overlayIconPixmap.declaration,
            attentionIconName.declaration, attentionIconPixmap.declaration, attentionMovieName.declaration,
            toolTip.declaration,
        ],
        signals: [
            newTitle.declaration, newIcon.declaration, newAttentionIcon.declaration, newOverlayIcon.declaration,
            newToolTip.declaration, newStatus.declaration,
        ])

    // MARK: - The item's methods

    public static let activate = MethodDescriptor<NoReply, Int32, Int32>(
        "Activate", of: StatusNotifierNames.itemInterface, "x", "y",
        doc: "The item was clicked at the screen position x, y.")
    public static let secondaryActivate = MethodDescriptor<NoReply, Int32, Int32>(
        "SecondaryActivate", of: StatusNotifierNames.itemInterface, "x", "y",
        doc: "The item was middle-clicked at the screen position x, y.")
    public static let contextMenu = MethodDescriptor<NoReply, Int32, Int32>(
        "ContextMenu", of: StatusNotifierNames.itemInterface, "x", "y",
        doc: "The host asks for the item's menu at the screen position x, y.")
    public static let scroll = MethodDescriptor<NoReply, Int32, String>(
        "Scroll", of: StatusNotifierNames.itemInterface, "delta", "orientation",
        doc: "The wheel turned over the item by delta steps, orientation horizontal or vertical.")

    // MARK: - The item's properties

    // Changing properties are announced by the specification's own New* signals, not by
    // PropertiesChanged (`changes: .none`); hosts read them again when the signal arrives.

    public static let category = PropertyDescriptor<String>(
        "Category", changes: .constant, doc: "What the item is about: ApplicationStatus.")
    public static let id = PropertyDescriptor<String>(
        "Id", changes: .constant, doc: "A name for the item that stays the same across sessions.")
    public static let title = PropertyDescriptor<String>(
        "Title", changes: .constant, doc: "The item's name, for people.")
    public static let status = PropertyDescriptor<String>(
        "Status", changes: .none, doc: "Passive, Active or NeedsAttention. Announced by NewStatus.")
    public static let windowID = PropertyDescriptor<Int32>(
        "WindowId", changes: .constant, doc: "The X11 window the item belongs to; 0 for none.")
    public static let iconThemePath = PropertyDescriptor<String>(
        "IconThemePath", changes: .constant, doc: "An extra directory to look up icon names in; empty for none.")
    public static let menu = PropertyDescriptor<ObjectPath>(
        "Menu", changes: .constant, doc: "The item's com.canonical.dbusmenu object.")
    public static let itemIsMenu = PropertyDescriptor<Bool>(
        "ItemIsMenu", changes: .constant, doc: "Whether a click should show the menu rather than call Activate.")
    public static let iconName = PropertyDescriptor<String>(
        "IconName", changes: .none, doc: "The themed icon shown; empty to show IconPixmap. Announced by NewIcon.")
    public static let iconPixmap = PropertyDescriptor<IconPixmaps>(
        "IconPixmap", changes: .none, doc: "The icon as pictures in several sizes. Announced by NewIcon.")
    public static let overlayIconName = PropertyDescriptor<String>(
        "OverlayIconName", changes: .constant, doc: "A themed icon drawn over the icon; empty for none.")
    public static let overlayIconPixmap = PropertyDescriptor<IconPixmaps>(
        "OverlayIconPixmap", changes: .constant, doc: "The overlay as pictures.")
    public static let attentionIconName = PropertyDescriptor<String>(
        "AttentionIconName", changes: .constant, doc: "The themed icon shown while the status is NeedsAttention.")
    public static let attentionIconPixmap = PropertyDescriptor<IconPixmaps>(
        "AttentionIconPixmap", changes: .constant, doc: "The attention icon as pictures.")
    public static let attentionMovieName = PropertyDescriptor<String>(
        "AttentionMovieName", changes: .constant, doc: "An animation shown while the status is NeedsAttention.")
    public static let toolTip = PropertyDescriptor<StatusNotifierToolTip>(
        "ToolTip", changes: .none, doc: "The tooltip: icon, title and description. Announced by NewToolTip.")

    // MARK: - The item's signals

    public static let newTitle = SignalDescriptor(
        "NewTitle", of: StatusNotifierNames.itemInterface, doc: "Title changed.")
    public static let newIcon = SignalDescriptor(
        "NewIcon", of: StatusNotifierNames.itemInterface, doc: "IconName or IconPixmap changed.")
    public static let newAttentionIcon = SignalDescriptor(
        "NewAttentionIcon", of: StatusNotifierNames.itemInterface, doc: "The attention icon changed.")
    public static let newOverlayIcon = SignalDescriptor(
        "NewOverlayIcon", of: StatusNotifierNames.itemInterface, doc: "The overlay icon changed.")
    public static let newToolTip = SignalDescriptor(
        "NewToolTip", of: StatusNotifierNames.itemInterface, doc: "ToolTip changed.")
    public static let newStatus = SignalDescriptor<String>(
        "NewStatus", of: StatusNotifierNames.itemInterface, "status", doc: "Status changed: its new value.")

    // MARK: - The watcher

    /// `org.kde.StatusNotifierWatcher.RegisterStatusNotifierItem`, which the tray calls on the
    /// watcher's object (`StatusNotifierNames.watcherPath`). The specification gives it no reply;
    /// a watcher that answers with values anyway has still registered the item.
    public static let registerItem = MethodDescriptor<IgnoredReply, String>(
        "RegisterStatusNotifierItem", of: StatusNotifierNames.watcherInterface, "service",
        doc: "Adds the item owned by the bus name service to those the hosts show.")
}

// MARK: - The item's values

/// An `a(iiay)` list of icon pictures, kept as its encoded value: the tray's ring is encoded
/// once per change of its percent, not at every read of the property.
public struct IconPixmaps: DBusRepresentable, Equatable {
    public static let signature: Signature = "a(iiay)"
    /// The `a(iiay)` value.
    public let value: Value

    /// No pictures.
    public static let none = IconPixmaps([])

    /// Wraps an `a(iiay)` value; nil for any other type.
    public init?(_ value: Value) {
        guard case .array(let element, _) = value, element == IconPixmap.signature else { return nil }
        self.value = value
    }

    /// The list of `pictures`, encoded now.
    public init(_ pictures: [IconPixmap]) {
        value = pictures.value
    }

    /// The pictures, decoded; nil if one is not a well-formed `(iiay)`.
    public var pictures: [IconPixmap]? { [IconPixmap](value) }
}

extension IconPixmap: DBusRepresentable {
    public static let signature: Signature = "(iiay)"

    /// Decodes an `(iiay)` picture; nil for another shape.
    public init?(_ value: Value) {
        guard case .structure(let fields) = value, fields.count == 3, let width = Int32(fields[0]),
            let height = Int32(fields[1]), let bytes = [UInt8](fields[2])
        else { return nil }
        self.init(width: Int(width), height: Int(height), bytes: bytes)
    }

    public var value: Value {
        .structure([Int32(width).value, Int32(height).value, bytes.value])
    }
}

/// The item's `ToolTip`, `(sa(iiay)ss)`: an icon (by name or as pictures), a title and a
/// description.
public struct StatusNotifierToolTip: DBusRepresentable, Equatable {
    public static let signature: Signature = "(sa(iiay)ss)"
    /// A themed icon name; empty for the item's own icon.
    public var iconName: String
    public var iconPixmaps: IconPixmaps
    public var title: String
    /// Hosts may read it as a small subset of HTML.
    public var description: String

    public init(iconName: String = "", iconPixmaps: IconPixmaps = .none, title: String, description: String) {
        self.iconName = iconName
        self.iconPixmaps = iconPixmaps
        self.title = title
        self.description = description
    }

    /// Decodes an `(sa(iiay)ss)` tooltip; nil for another shape.
    public init?(_ value: Value) {
        guard case .structure(let fields) = value, fields.count == 4, let iconName = String(fields[0]),
            let iconPixmaps = IconPixmaps(fields[1]), let title = String(fields[2]),
            let description = String(fields[3])
        else { return nil }
        self.init(iconName: iconName, iconPixmaps: iconPixmaps, title: title, description: description)
    }

    public var value: Value {
        .structure([iconName.value, iconPixmaps.value, title.value, description.value])
    }
}
