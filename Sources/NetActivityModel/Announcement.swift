/// What must be announced now: the main object's properties whose announced value changed
/// (nil means "not announced this time"), and the activities whose own progress is due.
///
/// The service sends the main object's part as one `PropertiesChanged` signal carrying every
/// non-nil property, `Activities` by name only (invalidated); and one `PropertiesChanged` on
/// each activity object in ``progressOf``.
public struct Announcement: Equatable, Sendable {
    /// The new `Active`, or nil.
    public var active: Bool?
    /// The new `Visible`, or nil.
    public var visible: Bool?
    /// The new `Count`, or nil.
    public var count: UInt32?
    /// The new `Progress`, or nil.
    public var progress: Double?
    /// The new `Rate`, or nil.
    public var rate: Double?
    /// Whether `Activities` changed since it was last announced (it is announced by
    /// invalidation, never by value).
    public var activitiesChanged: Bool
    /// Activities whose progress (`Completed`, `Total`, `Fraction`, `Rate`) is due, in the order
    /// they fell due.
    public var progressOf: [ActivityID]

    /// Creates an announcement; with no arguments, an empty one.
    public init(
        active: Bool? = nil,
        visible: Bool? = nil,
        count: UInt32? = nil,
        progress: Double? = nil,
        rate: Double? = nil,
        activitiesChanged: Bool = false,
        progressOf: [ActivityID] = []
    ) {
        self.active = active
        self.visible = visible
        self.count = count
        self.progress = progress
        self.rate = rate
        self.activitiesChanged = activitiesChanged
        self.progressOf = progressOf
    }

    /// Whether the main object has nothing to announce.
    public var mainIsEmpty: Bool {
        active == nil && visible == nil && count == nil && progress == nil && rate == nil && !activitiesChanged
    }

    /// Whether nothing at all is announced, so no signal is due.
    public var isEmpty: Bool {
        mainIsEmpty && progressOf.isEmpty
    }
}
