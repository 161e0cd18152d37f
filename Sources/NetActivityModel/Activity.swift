/// Identifies a tracked activity; never 0 and never reused while the service runs.
public typealias ActivityID = UInt32

/// A tracked activity: one entry of the `Activities` property, `(ussttt)` on the bus.
public struct Activity: Equatable, Hashable, Sendable {
    /// The activity's id, assigned by ``Ledger/begin(owner:label:started:)``.
    public var id: ActivityID
    /// The unique bus name of the connection that began it (for example `:1.42`).
    public var owner: String
    /// The caller's description, at most ``Ledger/maximumLabelBytes`` UTF-8 bytes.
    public var label: String
    /// Bytes transferred so far.
    public var completed: UInt64
    /// Bytes expected in all; 0 means unknown.
    public var total: UInt64
    /// When it began, in microseconds since the Unix epoch.
    public var started: UInt64

    /// Creates an activity from its fields.
    public init(
        id: ActivityID,
        owner: String,
        label: String,
        completed: UInt64,
        total: UInt64,
        started: UInt64
    ) {
        self.id = id
        self.owner = owner
        self.label = label
        self.completed = completed
        self.total = total
        self.started = started
    }
}
