import NetActivity

/// What `netactivity tray` is asked to do: which bus, which services, which themed icons,
/// whether to draw progress.
public struct TrayOptions: Equatable, Sendable {
    /// The bus the item is exported on, where the panel's StatusNotifierWatcher lives.
    public var bus: Bus
    /// The services whose merged state the item shows.
    public var services: FollowedServices
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

    /// Options for an item on `bus` with the given icons, drawing the progress ring unless told
    /// not to. It shows `services`, by default the service on `bus` alone.
    public init(
        bus: Bus = .session, services: FollowedServices? = nil, activeIcon: String = TrayOptions.defaultActiveIcon,
        idleIcon: String = TrayOptions.defaultIdleIcon, progressRing: Bool = true
    ) {
        self.bus = bus
        self.services = services ?? FollowedServices(session: bus, system: nil)
        self.activeIcon = activeIcon
        self.idleIcon = idleIcon
        self.progressRing = progressRing
    }
}
