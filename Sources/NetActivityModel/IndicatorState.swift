/// The values of the published properties.
public struct IndicatorState: Equatable, Sendable {
    /// `Active`: Count > 0.
    public var active: Bool
    /// `Visible`: the debounced indicator state.
    public var visible: Bool
    /// `Count`: shared counter plus live tracked activities.
    public var count: UInt32
    /// `Progress`: Σcompleted / Σtotal over activities with a known total, or -1.0.
    public var progress: Double
    /// `Activities`: the live tracked activities sorted by id.
    public var activities: [Activity]
    /// `Rate`: the sum of the live activities' rates, in bytes per second.
    public var rate: Double

    /// Creates a state from its values.
    public init(active: Bool, visible: Bool, count: UInt32, progress: Double, activities: [Activity], rate: Double = 0) {
        self.active = active
        self.visible = visible
        self.count = count
        self.progress = progress
        self.activities = activities
        self.rate = rate
    }

    /// What a fresh service shows and what clients assume before any signal: inactive,
    /// hidden, count 0, progress -1.0, no activities.
    public static let idle = IndicatorState(active: false, visible: false, count: 0, progress: -1.0, activities: [])
}
