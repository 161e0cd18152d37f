internal import CDBus

/// libdbus's checks of names and signatures, the rules of the D-Bus specification.
enum NameCheck {
    case objectPath, busName, interface, member, errorName
    /// Zero or more complete types.
    case signature
    /// Exactly one complete type.
    case singleCompleteType

    /// Whether `string` is valid; a string with an embedded NUL never is, because C would see
    /// only the part before it.
    func accepts(_ string: String) -> Bool {
        guard !string.containsNUL else { return false }
        return string.withCString { text in
            switch self {
            case .objectPath: dbus_validate_path(text, nil) != 0
            case .busName: dbus_validate_bus_name(text, nil) != 0
            case .interface: dbus_validate_interface(text, nil) != 0
            case .member: dbus_validate_member(text, nil) != 0
            case .errorName: dbus_validate_error_name(text, nil) != 0
            case .signature: dbus_signature_validate(text, nil) != 0
            case .singleCompleteType: dbus_signature_validate_single(text, nil) != 0
            }
        }
    }
}

/// This machine's D-Bus ID, for `org.freedesktop.DBus.Peer.GetMachineId`.
///
/// - Throws: libdbus's error when the ID cannot be read.
func localMachineID() throws(BusError) -> String {
    let id = try withDBusError { dbus_try_get_local_machine_id($0) }
    guard let id else { throw BusError(.failed, "no machine ID") }
    defer { dbus_free(id) }
    return String(cString: id)
}

/// Runs `body` with an initialised libdbus `DBusError`, frees it, and throws it as a
/// `BusError` if `body` set it.
func withDBusError<Result>(
    _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> Result
) throws(BusError) -> Result {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let result = body(&error)
    if dbus_error_is_set(&error) != 0 {
        throw BusError(cError: error)
    }
    return result
}

extension BusError {
    /// Copies a set libdbus error; a name libdbus hands over is always valid, but it is checked
    /// anyway so that nothing received from the bus is trusted blindly.
    init(cError error: CDBus.DBusError) {
        let rawName = error.name.map { String(cString: $0) } ?? ""
        let message = error.message.map { String(cString: $0) } ?? ""
        self.init(ErrorName(validating: rawName) ?? .failed, message)
    }
}
