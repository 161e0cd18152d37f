/// Properties whose announced value changed: nil means "not announced this time". `isEmpty`
/// when all nil.
///
/// The service sends a non-empty announcement as one `PropertiesChanged` signal carrying
/// every non-nil property.
public struct Announcement: Equatable, Sendable {
    /// The new `Active`, or nil.
    public var active: Bool?
    /// The new `Visible`, or nil.
    public var visible: Bool?
    /// The new `Count`, or nil.
    public var count: UInt32?
    /// The new `Progress`, or nil.
    public var progress: Double?
    /// The new `Activities`, or nil.
    public var activities: [Activity]?

    /// Creates an announcement; with no arguments, an empty one.
    public init(
        active: Bool? = nil,
        visible: Bool? = nil,
        count: UInt32? = nil,
        progress: Double? = nil,
        activities: [Activity]? = nil
    ) {
        self.active = active
        self.visible = visible
        self.count = count
        self.progress = progress
        self.activities = activities
    }

    /// Whether nothing is announced, so no signal is due.
    public var isEmpty: Bool {
        active == nil && visible == nil && count == nil && progress == nil && activities == nil
    }
}
