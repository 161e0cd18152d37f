internal import CDBus

/// A D-Bus error: a validated name plus a human-readable message.
///
/// Errors are values: match them by name in `catch`:
///
///     do { try connection.call(message) }
///     catch ErrorName.serviceUnknown { ... }
///     catch let error as BusError where error.name == .accessDenied { ... }
public struct BusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error's name, e.g. `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: ErrorName
    /// What went wrong, for a person.
    public var message: String

    /// An error with a name and a message.
    public init(_ name: ErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }
}

extension ErrorName {
    /// Lets `catch ErrorName.accessDenied` match a `BusError` of that name.
    public static func ~= (pattern: ErrorName, error: any Error) -> Bool {
        (error as? BusError)?.name == pattern
    }
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

    /// The message libdbus gives when it runs out of memory.
    static let outOfMemory = BusError(.noMemory, "out of memory")
}
