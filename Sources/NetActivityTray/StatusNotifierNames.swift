import DBus

/// The names the StatusNotifierItem specification fixes, in the `org.kde` namespace every tray
/// host in use today speaks (the specification's `org.freedesktop` spelling is not deployed).
public enum StatusNotifierNames {
    /// The item's interface.
    public static let itemInterface: InterfaceName = "org.kde.StatusNotifierItem"
    /// Where an item exports its object.
    public static let itemPath: ObjectPath = "/StatusNotifierItem"
    /// The watcher's well-known bus name, owned by the panel or a tray proxy.
    public static let watcher: BusName = "org.kde.StatusNotifierWatcher"
    /// The watcher's object.
    public static let watcherPath: ObjectPath = "/StatusNotifierWatcher"
    /// The watcher's interface.
    public static let watcherInterface: InterfaceName = "org.kde.StatusNotifierWatcher"
    /// The `Menu` value of an item without a com.canonical.dbusmenu object, as Qt spells it;
    /// hosts then call `ContextMenu` instead.
    public static let noMenu: ObjectPath = "/NO_DBUSMENU"

    /// The item's own bus name, `org.kde.StatusNotifierItem-PID-ID`.
    public static func itemName(processID: Int32, instance: Int = 1) -> BusName {
        BusName(unchecked: "org.kde.StatusNotifierItem-\(processID)-\(instance)")
    }
}
