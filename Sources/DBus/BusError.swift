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

extension BusError {
    /// The message libdbus gives when it runs out of memory.
    static let outOfMemory = BusError(.noMemory, "out of memory")
}
