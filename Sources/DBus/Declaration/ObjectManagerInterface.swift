/// `org.freedesktop.DBus.ObjectManager`'s signals, declared with the same typed descriptors as
/// any other interface: the serving side (`ObjectManager.swift`) declares them through these and
/// makes them on its own fast path; a client subscribes to them and decodes them through these.
public enum ObjectManagerInterface {
    public static let interfacesAdded = SignalDescriptor<ObjectPath, InterfacesAndProperties>(
        "InterfacesAdded", of: .objectManager, "object_path", "interfaces_and_properties",
        doc: "An object came, or gained interfaces: each with every one of its properties.")
    public static let interfacesRemoved = SignalDescriptor<ObjectPath, [String]>(
        "InterfacesRemoved", of: .objectManager, "object_path", "interfaces",
        doc: "An object went, or lost interfaces: their names.")
}

/// An `a{sa{sv}}` dictionary as it was sent: interface names to their properties, read by the
/// receiver entry by entry (`byInterface`), unknown interfaces and properties left for it to skip.
public struct InterfacesAndProperties: DBusRepresentable, Equatable {
    public static let signature: Signature = "a{sa{sv}}"
    /// The `a{sa{sv}}` value.
    public let value: Value

    /// Wraps an `a{sa{sv}}` value; nil for any other type.
    public init?(_ value: Value) {
        guard case .array(let element, _) = value, element.rawValue == "{sa{sv}}" else { return nil }
        self.value = value
    }

    /// Each interface's `a{sv}` value, by name; nil if an entry is malformed.
    public var byInterface: [String: Value]? { value.stringKeyedEntries }
}
