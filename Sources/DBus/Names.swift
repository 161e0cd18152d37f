
/// A string that names something on the bus and has been checked against the D-Bus
/// specification's grammar for that kind of name.
///
/// Every conforming type can only hold valid names: build one with `init(_:)` (which throws
/// `InvalidArgs` for an invalid string) or with a string literal (checked when it runs; a
/// literal is the programmer's, never the bus's).
public protocol ValidatedName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as it travels on the bus.
    var rawValue: String { get }
    /// Wraps a string already known to be valid.
    init(unchecked rawValue: String)
    /// Whether `string` is a valid name of this kind.
    static func isValid(_ string: String) -> Bool
    /// What this kind of name is called in error messages, e.g. "object path".
    static var kind: String { get }
}

extension ValidatedName {
    /// Validates `string`.
    ///
    /// - Throws: `BusError` named `InvalidArgs` that quotes the string.
    public init(_ string: String) throws(BusError) {
        guard Self.isValid(string) else {
            throw BusError(.invalidArgs, "'\(string)' is not a valid \(Self.kind)")
        }
        self.init(unchecked: string)
    }

    /// Validates `string`, or returns nil.
    public init?(validating string: String) {
        guard Self.isValid(string) else { return nil }
        self.init(unchecked: string)
    }

    /// A name written in the source; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        precondition(Self.isValid(value), "'\(value)' is not a valid \(Self.kind)")
        self.init(unchecked: value)
    }

    public var description: String { rawValue }
}

/// An object path such as `/io/github/netactivity/NetActivity1`.
public struct ObjectPath: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "object path"
    public static func isValid(_ string: String) -> Bool { NameCheck.objectPath.accepts(string) }

    /// The root path `/`.
    public static let root = ObjectPath(unchecked: "/")

    /// The path's elements: `/a/b` gives `["a", "b"]`, `/` gives `[]`.
    public var elements: [Substring] { rawValue.split(separator: "/") }

    /// The path one level up and this path's last element; nil for `/`.
    public var parentAndName: (parent: ObjectPath, name: Substring)? {
        // Bytes, not characters, here and below: a path is ASCII, and each call on the object
        // server's way (every activity's signals) would run the grapheme breaker or build a
        // string to compare.
        let utf8 = rawValue.utf8
        guard utf8.count > 1, let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let parent = slash == rawValue.startIndex ? "/" : String(rawValue[..<slash])
        return (ObjectPath(unchecked: parent), rawValue[utf8.index(after: slash)...])
    }

    /// Whether `self` lies strictly below `ancestor`.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        rawValue.withUTF8Bytes { path in
            ancestor.rawValue.withUTF8Bytes { prefix in
                if prefix.count == 1 { return path.count > 1 }
                return path.count > prefix.count && path[prefix.count] == UInt8(ascii: "/")
                    && UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: path[..<prefix.count]))
                        .holdsSameBytes(as: UnsafeRawBufferPointer(prefix))
            }
        }
    }
}

/// A unique (`:1.42`) or well-known (`io.github.netactivity.NetActivity1`) bus name.
public struct BusName: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "bus name"
    public static func isValid(_ string: String) -> Bool { NameCheck.busName.accepts(string) }

    /// Whether this is a unique connection name (starts with `:`).
    public var isUnique: Bool { rawValue.hasPrefix(":") }

    /// The message bus itself.
    public static let bus = BusName(unchecked: "org.freedesktop.DBus")
}

/// An interface name such as `org.freedesktop.DBus.Properties`.
public struct InterfaceName: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "interface name"
    public static func isValid(_ string: String) -> Bool { NameCheck.interface.accepts(string) }

    public static let properties = InterfaceName(unchecked: "org.freedesktop.DBus.Properties")
    public static let introspectable = InterfaceName(unchecked: "org.freedesktop.DBus.Introspectable")
    public static let peer = InterfaceName(unchecked: "org.freedesktop.DBus.Peer")
    public static let bus = InterfaceName(unchecked: "org.freedesktop.DBus")
    public static let local = InterfaceName(unchecked: "org.freedesktop.DBus.Local")
    public static let objectManager = InterfaceName(unchecked: "org.freedesktop.DBus.ObjectManager")
}

/// A method or signal name such as `Push`.
public struct MemberName: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "member name"
    public static func isValid(_ string: String) -> Bool { NameCheck.member.accepts(string) }
}

/// An error name such as `org.freedesktop.DBus.Error.InvalidArgs`.
public struct ErrorName: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "error name"
    public static func isValid(_ string: String) -> Bool { NameCheck.errorName.accepts(string) }
}

extension ErrorName {
    private static func standard(_ suffix: String) -> ErrorName {
        ErrorName(unchecked: "org.freedesktop.DBus.Error." + suffix)
    }
    public static let failed = standard("Failed")
    public static let noMemory = standard("NoMemory")
    public static let serviceUnknown = standard("ServiceUnknown")
    public static let nameHasNoOwner = standard("NameHasNoOwner")
    public static let noReply = standard("NoReply")
    public static let timeout = standard("Timeout")
    public static let disconnected = standard("Disconnected")
    public static let noServer = standard("NoServer")
    public static let fileNotFound = standard("FileNotFound")
    public static let invalidArgs = standard("InvalidArgs")
    public static let invalidSignature = standard("InvalidSignature")
    public static let accessDenied = standard("AccessDenied")
    public static let limitsExceeded = standard("LimitsExceeded")
    public static let unknownMethod = standard("UnknownMethod")
    public static let unknownObject = standard("UnknownObject")
    public static let unknownInterface = standard("UnknownInterface")
    public static let unknownProperty = standard("UnknownProperty")
    public static let propertyReadOnly = standard("PropertyReadOnly")
    public static let notSupported = standard("NotSupported")
}
