/// `org.freedesktop.DBus.Properties` as a client calls it, declared with the same typed
/// descriptors as any other interface (the serving side is `StandardInterfaces`).
public enum PropertiesInterface {
    public static let get = MethodDescriptor<Variant, String, String>(
        "Get", of: .properties, "interface_name", "property_name", returning: ["value"],
        doc: "One property of an interface of the object.")
    public static let getAll = MethodDescriptor<VariantDictionary, String>(
        "GetAll", of: .properties, "interface_name", returning: ["props"],
        doc: "Every property of an interface of the object, by name.")
    public static let propertiesChanged = SignalDescriptor<String, VariantDictionary, [String]>(
        "PropertiesChanged", of: .properties, "interface_name", "changed_properties", "invalidated_properties",
        doc: "Properties of an interface of the object changed: the new values, and the names of those sent without one.")
}
