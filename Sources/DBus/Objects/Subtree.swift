/// A family of objects one level below a path, that come and go at run time and are looked up
/// when a call arrives instead of being exported one by one (as sd-bus's fallback vtables and
/// zbus's dynamic object trees do). See `ObjectServer.exportSubtree(_:under:)`.
public struct Subtree {
    /// The names of the live objects, each the last element of its path.
    let names: () -> [String]
    /// Whether there is no live object; cheaper than `names().isEmpty`.
    let isEmpty: () -> Bool
    /// The interfaces of the object called `name`, or nil when there is none. The object server
    /// uses what it returns at once, before it looks up another object, so one table may serve
    /// every object of the family, its getters reading the object looked up last.
    let interfaces: (Substring) -> [Interface]?

    /// A family whose live objects `names` lists, `isEmpty` tells whether there are any, and
    /// `interfaces` describes one by name (nil: no such object, and calls to it get
    /// `UnknownObject`). A description is used at once, before the next lookup: one table may
    /// serve every object of the family, its getters reading the object looked up last.
    public init(
        names: @escaping () -> [String], isEmpty: @escaping () -> Bool,
        interfaces: @escaping (Substring) -> [Interface]?
    ) {
        self.names = names
        self.isEmpty = isEmpty
        self.interfaces = interfaces
    }
}
