import DBus
import NetActivityModel

/// One property of the activity objects and where its value lives. Most live in the model's
/// `Activity`, the one value type the service's model, the client and the outputs share: such a
/// property is declared with the key path it is read at (`PropertyDescriptor.held(_:)`), and the
/// service's getter, the client's field and `status --json`'s member all follow from that line.
/// The owner's attribution (process, user, application) is the other kind: the service learns
/// it once per connection, not per activity, and binds it itself.
public struct ActivityProperty: Sendable {
    /// The property as the introspection XML and the tables declare it.
    public let declaration: PropertyDeclaration
    /// How the property reads and writes an `Activity`; nil for the owner's attribution.
    let held: (any HeldActivityValue)?

    /// Whether the model's `Activity` holds the value (false for the owner's attribution).
    public var isHeld: Bool { held != nil }

    /// The service's getter: the value at the declared key path of the activity `activity`
    /// reaches from the object asked for; nil for an attribution property.
    public func bind<Object: AnyObject>(
        through activity: KeyPath<Object, Activity> & Sendable
    ) -> SubtreeProperty<Object>? {
        held?.bind(declaration, through: activity)
    }

    /// The property's value in `activity`, as the bus carries it; nil for an attribution property.
    public func value(of activity: Activity) -> Value? {
        held?.value(of: activity)
    }

    /// A client's field for it: each value received, decoded as the declared type, is stored at
    /// the declared key path of the activity `activity` reaches. Nil for a property a client
    /// cannot store there (the owner's attribution, and `Fraction`, which the model works out).
    public func field<Root>(through activity: WritableKeyPath<Root, Activity> & Sendable) -> PropertyField<Root>? {
        held?.field(declaration, through: activity)
    }
}

extension PropertyDescriptor {
    /// This property, held by the model's `Activity` at `path`: a client stores what it
    /// receives there too.
    public func held(_ path: WritableKeyPath<Activity, Type> & Sendable) -> ActivityProperty {
        ActivityProperty(declaration: declaration, held: Held(descriptor: self, path: path, writable: path))
    }

    /// This property, worked out by the model's `Activity` at `path` (`Fraction`): a client
    /// keeps what it receives as it chooses.
    public func held(computed path: KeyPath<Activity, Type> & Sendable) -> ActivityProperty {
        ActivityProperty(declaration: declaration, held: Held(descriptor: self, path: path, writable: nil))
    }

    /// This property, the owner's attribution: bound by the service, kept by a client, by hand.
    public var attribution: ActivityProperty {
        ActivityProperty(declaration: declaration, held: nil)
    }
}

/// A property held by `Activity`, its Swift type kept so values are read and decoded typed.
protocol HeldActivityValue: Sendable {
    func bind<Object: AnyObject>(
        _ declaration: PropertyDeclaration, through activity: KeyPath<Object, Activity> & Sendable
    ) -> SubtreeProperty<Object>
    func value(of activity: Activity) -> Value
    func field<Root>(
        _ declaration: PropertyDeclaration, through activity: WritableKeyPath<Root, Activity> & Sendable
    ) -> PropertyField<Root>?
}

private struct Held<Type: DBusRepresentable>: HeldActivityValue {
    let descriptor: PropertyDescriptor<Type>
    let path: KeyPath<Activity, Type> & Sendable
    let writable: (WritableKeyPath<Activity, Type> & Sendable)?

    func bind<Object: AnyObject>(
        _ declaration: PropertyDeclaration, through activity: KeyPath<Object, Activity> & Sendable
    ) -> SubtreeProperty<Object> {
        // One key path from the object to the field: the getter reads the field in place,
        // without copying the activity, for each of the objects GetManagedObjects lists.
        let path = activity.appending(path: path)
        return SubtreeProperty(declaration.name, declaration.signature, changeSignal: declaration.changes) {
            $0[keyPath: path].value
        }
    }

    func value(of activity: Activity) -> Value {
        activity[keyPath: path].value
    }

    func field<Root>(
        _ declaration: PropertyDeclaration, through activity: WritableKeyPath<Root, Activity> & Sendable
    ) -> PropertyField<Root>? {
        guard let writable else { return nil }
        return descriptor.field { root, value in root[keyPath: activity][keyPath: writable] = value }
    }
}

extension Activity {
    /// The kind hint as the bus carries it; a kind this model does not know reads as `other`.
    var kindName: String {
        get { hints.kind.rawValue }
        set { hints.kind = ActivityKind(rawValue: newValue) ?? .other }
    }
}
