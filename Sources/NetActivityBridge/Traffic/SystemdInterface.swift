import DBus

/// The parts of systemd's manager the system side asks, declared with the typed descriptors:
/// which object a unit is, and that unit's description.
enum SystemdInterface {
    static let name: BusName = "org.freedesktop.systemd1"
    static let managerPath: ObjectPath = "/org/freedesktop/systemd1"
    static let managerInterface: InterfaceName = "org.freedesktop.systemd1.Manager"
    static let unitInterface: InterfaceName = "org.freedesktop.systemd1.Unit"
    /// The error `GetUnit` answers for a unit that is not loaded.
    static let noSuchUnit: ErrorName = "org.freedesktop.systemd1.NoSuchUnit"

    static let getUnit = MethodDescriptor<ObjectPath, String>(
        "GetUnit", of: managerInterface, "name", returning: ["unit"], doc: "The object of a loaded unit.")
    static let description = PropertyDescriptor<String>(
        "Description", changes: .emitsValue, doc: "The unit's description, as its unit file or systemd gives it.")
}
