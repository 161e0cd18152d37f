/// A family of objects one level below a path, that come and go at run time and are looked up
/// when a call arrives instead of being exported one by one (as sd-bus's fallback vtables and
/// zbus's dynamic object trees do). See `ObjectServer.exportSubtree(_:under:)`.
///
/// One table of interfaces serves every object of the family: each getter is handed the object
/// it reads, as sd-bus hands a vtable's getter its `userdata`.
public struct Subtree {
    /// The names of the live objects, each the last element of its path.
    let names: () -> [String]
    /// Whether there is no live object; cheaper than `names().isEmpty`.
    let isEmpty: () -> Bool
    /// Every object's own interfaces, their getters reading the object they are handed.
    let interfaces: [Interface]
    /// The object called `name`, for the getters; nil when there is none.
    let lookUp: (Substring) -> AnyObject?

    /// A family whose live objects `names` lists, `isEmpty` tells whether there are any, and
    /// `lookUp` finds by name (nil: no such object, and calls to it get `UnknownObject`); each
    /// object has `interfaces`, whose getters are handed the object `lookUp` found.
    public init<Object: AnyObject>(
        names: @escaping () -> [String], isEmpty: @escaping () -> Bool, lookUp: @escaping (Substring) -> Object?,
        interfaces: [SubtreeInterface<Object>]
    ) {
        self.names = names
        self.isEmpty = isEmpty
        self.lookUp = { lookUp($0) }
        self.interfaces = interfaces.map(\.interface)
    }

    /// The object called `name` with its interfaces; nil when there is none.
    func object(_ name: Substring) -> SubtreeObject? {
        lookUp(name).map { SubtreeObject(interfaces: interfaces, object: $0) }
    }
}

/// One object of a `Subtree`: the family's interfaces and the object their getters read.
struct SubtreeObject {
    let interfaces: [Interface]
    let object: AnyObject
}

/// An interface of every object of a `Subtree` whose objects are `Object`s.
public struct SubtreeInterface<Object: AnyObject> {
    let interface: Interface

    /// The interface `name` with read-only `properties`.
    public init(_ name: InterfaceName, properties: [SubtreeProperty<Object>]) {
        interface = Interface(name, properties: properties.map(\.property))
    }
}

/// A read-only property of every object of a `Subtree` whose objects are `Object`s, its getter
/// handed the object asked for.
public struct SubtreeProperty<Object: AnyObject> {
    let property: Property

    /// The property's name.
    public var name: MemberName { property.name }

    /// The property `name` of type `type`, announced as `changeSignal` says; `get` returns the
    /// value of the object it is handed, which must have type `type`.
    public init(
        _ name: MemberName, _ type: Signature, changeSignal: ChangeSignal = .emitsValue,
        get: @escaping (Object) -> Value
    ) {
        property = Property(name, type, changeSignal: changeSignal) { object in
            // Only `Subtree.init` hands this getter an object, one its `lookUp` found: always
            // an `Object` (checked in debug builds).
            get(unsafeDowncast(object.unsafelyUnwrapped, to: Object.self))
        }
    }
}
