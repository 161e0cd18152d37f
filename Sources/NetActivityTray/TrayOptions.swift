import NetActivity

/// What `netactivity tray` is asked to do: which bus, which themed icons, whether to draw progress.
public struct TrayOptions: Equatable, Sendable {
    /// The bus the service lives on; the item is exported on the same bus.
    public var bus: Bus
    /// The icon shown while the indicator is visible.
    public var activeIcon: String
    /// The icon of the idle (`Passive`) item; most hosts hide passive items anyway.
    public var idleIcon: String
    /// Whether to draw a ring filled to the overall progress, when known, in place of the
    /// activity icon (`--no-progress-ring` turns it off).
    public var progressRing: Bool

    /// The default activity icon, from the freedesktop icon naming specification's status icons.
    public static let defaultActiveIcon = "network-transmit-receive"
    /// The default idle icon.
    public static let defaultIdleIcon = "network-idle"

    /// Options for `bus` with the given icons, drawing the progress ring unless told not to.
    public init(
        bus: Bus = .session, activeIcon: String = TrayOptions.defaultActiveIcon,
        idleIcon: String = TrayOptions.defaultIdleIcon, progressRing: Bool = true
    ) {
        self.bus = bus
        self.activeIcon = activeIcon
        self.idleIcon = idleIcon
        self.progressRing = progressRing
    }
}
