/// A named, typed argument of a method or signal.
public struct Argument: Sendable {
    public var name: String
    public var type: Signature
    /// An argument called `name` of type `type`.
    public init(_ name: String, _ type: Signature) {
        self.name = name
        self.type = type
    }
}

/// A method call as a handler sees it: its decoded arguments, its sender and the message.
///
/// Noncopyable, and lent to the handler only for the call: it refers to libdbus's message
/// without a reference of its own, which spares every call a `Message` object.
public struct MethodCall: ~Copyable {
    private let raw: RawMessage
    /// The arguments, already checked against the method's input signature.
    public let arguments: [Value]
    private let senders: SenderNames

    init(raw: RawMessage, arguments: [Value], senders: SenderNames) {
        self.raw = raw
        self.arguments = arguments
        self.senders = senders
    }

    /// The caller's unique name ("" on a peer-to-peer connection).
    public var sender: String { senders.name(raw.sender) }

    /// The call itself, with a reference of its own: it may be kept after the handler returns.
    public var message: Message { Message(borrowing: raw) }
}

/// One exported method: its signature and the handler that answers it.
public struct Method {
    public var name: MemberName
    public var inputs: [Argument]
    public var outputs: [Argument]
    /// Answers the call with the output values, or throws a `BusError` that becomes the error
    /// reply. Any other error becomes `org.freedesktop.DBus.Error.Failed`.
    public var handler: (borrowing MethodCall) throws -> [Value]
    /// Set for a method whose reply is too large to build as values first: it writes the
    /// reply's body itself, and `handler` is not used.
    var replyWriter: ((borrowing MethodCall, inout ReplyWriter) throws -> Void)?

    public init(
        _ name: MemberName, inputs: [Argument] = [], outputs: [Argument] = [],
        handler: @escaping (borrowing MethodCall) throws -> [Value]
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    /// A method that writes its reply's body value by value (see `ReplyWriter`).
    public init(
        _ name: MemberName, inputs: [Argument] = [], outputs: [Argument] = [],
        writingReply: @escaping (borrowing MethodCall, inout ReplyWriter) throws -> Void
    ) {
        self.init(name, inputs: inputs, outputs: outputs) { _ in [] }
        replyWriter = writingReply
    }

    /// The signature a call must have.
    public var inputSignature: Signature { Signature(unchecked: inputs.map(\.type.rawValue).joined()) }
}

/// How a property announces changes; the value of the
/// `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation.
public enum ChangeSignal: String, Sendable {
    /// `PropertiesChanged` carries the new value.
    case emitsValue = "true"
    /// `PropertiesChanged` names the property as invalidated.
    case invalidates
    /// The value never changes while the object exists.
    case constant = "const"
    /// Changes are not announced.
    case none = "false"
}

/// One exported, read-only property.
public struct Property {
    public var name: MemberName
    public var type: Signature
    public var changeSignal: ChangeSignal
    /// Returns the current value of the object it is handed: nil for an object exported on its
    /// own, whose getter captures what it reads; a `Subtree`'s object for one of its family.
    let read: (AnyObject?) -> Value

    /// A property whose `get` returns the current value, which must have type `type`.
    public init(_ name: MemberName, _ type: Signature, changeSignal: ChangeSignal = .emitsValue, get: @escaping () -> Value) {
        self.init(name, type, changeSignal: changeSignal) { _ in get() }
    }

    init(_ name: MemberName, _ type: Signature, changeSignal: ChangeSignal, read: @escaping (AnyObject?) -> Value) {
        self.name = name
        self.type = type
        self.changeSignal = changeSignal
        self.read = read
    }

    /// The current value for `object` (nil: an object exported on its own).
    func value(of object: AnyObject?) -> Value { read(object) }
}

/// One signal an interface may emit, for introspection.
public struct SignalDescription: Sendable {
    public var name: MemberName
    public var arguments: [Argument]
    public init(_ name: MemberName, arguments: [Argument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface as one table: its methods, properties and signals. Introspection, property
/// access, signature checks and `PropertiesChanged` are all derived from it.
public struct Interface {
    public var name: InterfaceName
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [SignalDescription]

    public init(
        _ name: InterfaceName, methods: [Method] = [], properties: [Property] = [],
        signals: [SignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func property(_ name: String) -> Property? { properties.first { $0.name.rawValue == name } }
}
