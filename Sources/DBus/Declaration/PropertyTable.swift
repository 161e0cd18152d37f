/// One declared property bound to where a client keeps it: the client's counterpart of
/// `PropertyDescriptor.bind(_:)`, which binds a service's getter.
public struct PropertyField<Root>: Sendable {
    /// The property's name.
    public let name: MemberName
    let store: @Sendable (inout Root, Value) -> Bool

    /// Decodes `value` (in a variant or not) as the property's type and stores it in `root`;
    /// false, leaving `root` as it was, for a value of another type.
    public func apply(_ value: Value, to root: inout Root) -> Bool {
        store(&root, value)
    }
}

extension PropertyDescriptor {
    /// This property kept by `store`, which receives each value decoded as `Type`.
    public func field<Root>(_ store: @escaping @Sendable (inout Root, Type) -> Void) -> PropertyField<Root> {
        PropertyField(name: name) { root, value in
            guard let decoded = decode(value) else { return false }
            store(&root, decoded)
            return true
        }
    }
}

/// How a client keeps an interface's properties in one value of its own, derived from the
/// interface's declaration: each property with a field (`PropertyDescriptor.field`) is decoded
/// through its descriptor into it; every other declared property is kept as sent, by name,
/// once its value has the declared type. A property added to the declaration thus reaches
/// clients with no change to them; a value of the wrong type, or a name the declaration does
/// not have, is dropped, never trusted.
public struct PropertyTable<Root>: Sendable {
    private let fields: [String: PropertyField<Root>]
    private let declared: [String: Signature]
    private let keep: @Sendable (inout Root, String, Value) -> Void

    /// The table of `interface`'s properties: `fields` for those the client keeps in fields of
    /// its own, `others` for the rest. Every field must name a declared property, once: a
    /// mismatch is the client's own mistake, found the first time the table is used.
    public init(
        _ interface: InterfaceDescriptor, fields: [PropertyField<Root>],
        others: @escaping @Sendable (inout Root, String, Value) -> Void
    ) {
        let declared = Dictionary(uniqueKeysWithValues: interface.properties.map { ($0.name.rawValue, $0.signature) })
        var byName: [String: PropertyField<Root>] = [:]
        for field in fields {
            precondition(declared[field.name.rawValue] != nil, "\(interface.name) declares no property \(field.name)")
            precondition(byName.updateValue(field, forKey: field.name.rawValue) == nil, "\(field.name) bound twice")
        }
        self.fields = byName
        self.declared = declared
        keep = others
    }

    /// Applies property values (from `GetAll`, `PropertiesChanged` or an ObjectManager's
    /// dictionaries, in variants or not) to `root`.
    public func apply(_ properties: [String: Value], to root: inout Root) {
        for (name, value) in properties {
            if let field = fields[name] {
                _ = field.apply(value, to: &root)
            } else if let signature = declared[name] {
                let value = value.unwrapped ?? value
                if value.signature == signature { keep(&root, name, value) }
            }
        }
    }
}
