import NetActivity

/// What `netactivity tray` is asked to do: which bus, which services, which icons and where
/// hosts find them, whether to draw progress.
public struct TrayOptions: Equatable, Sendable {
    /// The bus the item is exported on, where the panel's StatusNotifierWatcher lives.
    public var bus: Bus
    /// The services whose merged state the item shows.
    public var services: FollowedServices
    /// The icon shown while the indicator is visible.
    public var activeIcon: String
    /// The icon of the idle (`Passive`) item; most hosts hide passive items anyway.
    public var idleIcon: String
    /// The item's `IconThemePath`: a folder holding `hicolor/…` where hosts look up the icon
    /// names first; empty for none (`TrayIcons.themePath(executable:exists:)` says which).
    public var iconThemePath: String
    /// Whether to draw a ring filled to the overall progress, when known, in place of the
    /// activity icon (`--no-progress-ring` turns it off).
    public var progressRing: Bool

    /// The default activity icon: NetActivity's own, which every icon theme finds in hicolor.
    public static let defaultActiveIcon = TrayIcons.active
    /// The default idle icon, NetActivity's own too.
    public static let defaultIdleIcon = TrayIcons.idle

    /// Options for an item on `bus` with the given icons, looked up first in `iconThemePath`,
    /// drawing the progress ring unless told not to. It shows `services`, by default the service
    /// on `bus` alone.
    public init(
        bus: Bus = .session, services: FollowedServices? = nil, activeIcon: String = TrayOptions.defaultActiveIcon,
        idleIcon: String = TrayOptions.defaultIdleIcon, iconThemePath: String = "", progressRing: Bool = true
    ) {
        self.bus = bus
        self.services = services ?? FollowedServices(session: bus, system: nil)
        self.activeIcon = activeIcon
        self.idleIcon = idleIcon
        self.iconThemePath = iconThemePath
        self.progressRing = progressRing
    }
}
