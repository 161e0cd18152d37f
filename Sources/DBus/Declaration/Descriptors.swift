// Typed declarations of an interface's members, as zbus's `#[interface]` and sd-bus's vtables
// declare them: the service binds handlers and getters to them, clients build calls and decode
// replies and values through them, and the introspection XML is generated from them.

// MARK: - Properties

/// One read-only property: its name, its Swift type (whose signature it has on the bus), how
/// its changes are announced, and a one-line description.
public struct PropertyDescriptor<Type: DBusRepresentable>: Sendable {
    /// The property's name.
    public let name: MemberName
    /// `Type.signature`, made once.
    public let signature: Signature
    /// How `PropertiesChanged` announces it (`EmitsChangedSignal`).
    public let changes: ChangeSignal
    /// What it means, for the introspection XML and the docs.
    public let doc: String

    /// A property called `name`, announced as `changes` says.
    public init(_ name: MemberName, changes: ChangeSignal = .emitsValue, doc: String) {
        self.name = name
        self.signature = Type.signature
        self.changes = changes
        self.doc = doc
    }

    /// The property without its Swift type, for tables and the XML.
    public var declaration: PropertyDeclaration {
        PropertyDeclaration(name: name, signature: signature, changes: changes, doc: doc)
    }

    /// Decodes a value of this property as `Get`, `GetAll`, `PropertiesChanged` or the
    /// ObjectManager's dictionaries carry it (in a variant or not); nil for another type.
    @inlinable public func decode(_ value: Value) -> Type? {
        Type(value.unwrapped ?? value)
    }

    /// The exported property, whose getter `get` is read at every `Get`, `GetAll` and change
    /// signal.
    public func bind(_ get: @escaping () -> Type) -> Property {
        Property(name, signature, changeSignal: changes) { get().value }
    }

    /// The property of every object of a subtree, its getter handed the object asked for.
    public func bind<Object: AnyObject>(_ get: @escaping (Object) -> Type) -> SubtreeProperty<Object> {
        SubtreeProperty(name, signature, changeSignal: changes) { get($0).value }
    }

    /// The property of every object of a subtree, read at `keyPath` of the object asked for.
    public func bind<Object: AnyObject>(_ keyPath: KeyPath<Object, Type> & Sendable) -> SubtreeProperty<Object> {
        SubtreeProperty(name, signature, changeSignal: changes) { $0[keyPath: keyPath].value }
    }
}

/// A property's declaration without its Swift type.
public struct PropertyDeclaration: Sendable, Equatable {
    public let name: MemberName
    public let signature: Signature
    public let changes: ChangeSignal
    public let doc: String
}

// MARK: - Methods

/// The name of one argument of type `Type`; written as a string literal in a declaration.
public struct ArgumentName<Type: DBusRepresentable>: Sendable, ExpressibleByStringLiteral {
    public let name: String
    public init(stringLiteral name: String) { self.name = name }
}

/// A method's reply: no value (`NoReply`) or one value of a `DBusRepresentable` type.
public protocol MethodReply: Sendable {
    /// The reply's output signatures, one per value.
    static var signatures: [Signature] { get }
    /// Decodes a reply's values; nil if they have another shape.
    init?(values: [Value])
    /// The reply's values.
    var values: [Value] { get }
}

extension MethodReply where Self: DBusRepresentable {
    public static var signatures: [Signature] { [signature] }
    public init?(values: [Value]) {
        guard values.count == 1 else { return nil }
        self.init(values[0])
    }
    public var values: [Value] { [value] }
}

extension UInt32: MethodReply {}
extension Bool: MethodReply {}
extension ObjectPath: MethodReply {}
extension String: MethodReply {}
extension VariantDictionary: MethodReply {}
extension Variant: MethodReply {}
extension Array: MethodReply where Element: DBusRepresentable {}

/// The empty reply of a method that returns nothing.
public struct NoReply: MethodReply {
    public static let signatures: [Signature] = []
    public init() {}
    public init?(values: [Value]) {
        guard values.isEmpty else { return nil }
    }
    public var values: [Value] { [] }
}

/// The reply of a foreign method whose success is all a caller needs: declared without outputs,
/// like `NoReply`, yet a peer that returns some anyway is not taken to have failed.
public struct IgnoredReply: MethodReply {
    public static let signatures: [Signature] = []
    public init() {}
    public init?(values: [Value]) {}
    public var values: [Value] { [] }
}

/// The arguments of a call did not have the method's input types.
public struct ArgumentMismatch: Error {
    @usableFromInline init() {}
}

/// One method: its name, its argument names and types (`Input`), its reply (`Reply`), and a
/// description.
public struct MethodDescriptor<Reply: MethodReply, each Input: DBusRepresentable>: Sendable {
    /// The method's name.
    public let name: MemberName
    /// The interface it belongs to, which a call names.
    public let interface: InterfaceName
    /// The input arguments, named, in order.
    public let inputs: [ArgumentDeclaration]
    /// The output arguments, named, in order.
    public let outputs: [ArgumentDeclaration]
    /// What it does and which errors it answers, for the introspection XML.
    public let doc: String

    /// A method called `name` of `interface` whose arguments are called `arguments` and whose
    /// reply values are called `replyNames`.
    public init(
        _ name: MemberName, of interface: InterfaceName, _ arguments: repeat ArgumentName<each Input>,
        returning replyNames: [String] = [], doc: String
    ) {
        precondition(replyNames.count == Reply.signatures.count, "\(name): one name per reply value")
        self.name = name
        self.interface = interface
        var inputs: [ArgumentDeclaration] = []
        repeat inputs.append(ArgumentDeclaration(name: (each arguments).name, signature: (each Input).signature))
        self.inputs = inputs
        outputs = zip(replyNames, Reply.signatures).map { ArgumentDeclaration(name: $0, signature: $1) }
        self.doc = doc
    }

    /// The method without its Swift types, for tables and the XML.
    public var declaration: MethodDeclaration {
        MethodDeclaration(name: name, inputs: inputs, outputs: outputs, doc: doc)
    }

    /// A call's arguments, in order.
    @inlinable public func arguments(_ input: repeat each Input) -> [Value] {
        var values: [Value] = []
        repeat values.append((each input).value)
        return values
    }

    /// A call of this method to `destination`'s object at `path`.
    ///
    /// - Throws: `BusError` if libdbus cannot build the message.
    public func call(
        _ input: repeat each Input, destination: BusName, path: ObjectPath
    ) throws(BusError) -> Message {
        try Message.methodCall(
            destination: destination, path: path, interface: interface, member: name,
            arguments: arguments(repeat each input))
    }

    /// Decodes a call's arguments.
    ///
    /// - Throws: `ArgumentMismatch` if they are not exactly the method's input types.
    @inlinable public func decode(_ values: [Value]) throws(ArgumentMismatch) -> (repeat each Input) {
        guard values.count == inputs.count else { throw ArgumentMismatch() }
        var index = -1
        func next() -> Int {
            index += 1
            return index
        }
        return try (repeat (each Input).decoded(values, at: next()))
    }

    /// Decodes a reply's values; nil if they have another shape.
    @inlinable public func reply(_ values: [Value]) -> Reply? {
        Reply(values: values)
    }

    /// The exported method, answered by `handler`. The object server checks a call's
    /// signature against `inputs` before `handler` runs, so `decode` cannot fail there.
    public func bind(_ handler: @escaping (borrowing MethodCall) throws -> Reply) -> Method {
        Method(
            name, inputs: inputs.map { Argument($0.name, $0.signature) },
            outputs: outputs.map { Argument($0.name, $0.signature) }
        ) { call in try handler(call).values }
    }
}

/// One named, typed argument.
public struct ArgumentDeclaration: Sendable, Equatable {
    public let name: String
    public let signature: Signature
}

/// A method's declaration without its Swift types.
public struct MethodDeclaration: Sendable, Equatable {
    public let name: MemberName
    public let inputs: [ArgumentDeclaration]
    public let outputs: [ArgumentDeclaration]
    public let doc: String

    /// The input signature, e.g. `utt`.
    public var inputSignature: String { inputs.map(\.signature.rawValue).joined() }
    /// The output signature, e.g. `u`.
    public var outputSignature: String { outputs.map(\.signature.rawValue).joined() }
}

// MARK: - Interfaces

/// An interface as its declaration says it: its name, description, methods, properties and
/// signals, in the order they are exported.
public struct InterfaceDescriptor: Sendable {
    public let name: InterfaceName
    /// What the interface is, for the introspection XML.
    public let doc: String
    public let methods: [MethodDeclaration]
    public let properties: [PropertyDeclaration]
    /// The signals its objects emit beside `PropertiesChanged`, which the object server adds.
    public let signals: [SignalDeclaration]

    public init(
        _ name: InterfaceName, doc: String, methods: [MethodDeclaration] = [], properties: [PropertyDeclaration],
        signals: [SignalDeclaration] = []
    ) {
        self.name = name
        self.doc = doc
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// The exported interface built from bound `methods` and `properties`: every declared
    /// member bound once, none other, in any order (they are exported in the declared one); its
    /// signals are the declared ones, for introspection.
    ///
    /// A mismatch is the exporter's own mistake, found at its start, never caused by a peer.
    public func bind(methods: [Method] = [], properties: [Property]) -> Interface {
        Interface(
            name, methods: declaredOrder(methods, by: self.methods.map(\.name), \.name),
            properties: declaredOrder(properties, by: self.properties.map(\.name), \.name),
            signals: signals.map(SignalDescription.init))
    }

    /// The interface of every object of a subtree, built from its bound properties: every
    /// declared property bound once, in any order.
    public func bind<Object: AnyObject>(subtreeProperties properties: [SubtreeProperty<Object>]) -> SubtreeInterface<Object> {
        precondition(methods.isEmpty && signals.isEmpty, "\(name): a subtree's interface has properties only")
        return SubtreeInterface(name, properties: declaredOrder(properties, by: self.properties.map(\.name), \.name))
    }

    /// `members` in the order of `declared`, each declared name bound exactly once.
    private func declaredOrder<Member>(
        _ members: [Member], by declared: [MemberName], _ memberName: (Member) -> MemberName
    ) -> [Member] {
        var byName: [MemberName: Member] = [:]
        for member in members {
            let bound = memberName(member)
            precondition(byName.updateValue(member, forKey: bound) == nil, "\(name): \(bound) is bound twice")
        }
        precondition(
            byName.count == declared.count && declared.allSatisfy { byName[$0] != nil },
            "\(name): bind every declared member once and none other (declared: \(declared.map(\.rawValue)), bound: \(members.map { memberName($0).rawValue }))")
        return declared.compactMap { byName[$0] }
    }
}

// MARK: - Signals

/// One signal: its name, its interface, and its arguments' names and types.
public struct SignalDescriptor<each Argument: DBusRepresentable>: Sendable {
    /// The signal's name.
    public let name: MemberName
    /// The interface it belongs to.
    public let interface: InterfaceName
    /// The arguments, named, in order.
    public let arguments: [ArgumentDeclaration]
    /// The signature of its arguments, e.g. `sss`, made once.
    public let signature: Signature
    /// What it announces.
    public let doc: String

    /// A signal called `name` of `interface` whose arguments are called `arguments`.
    public init(_ name: MemberName, of interface: InterfaceName, _ arguments: repeat ArgumentName<each Argument>, doc: String) {
        self.name = name
        self.interface = interface
        var declared: [ArgumentDeclaration] = []
        repeat declared.append(ArgumentDeclaration(name: (each arguments).name, signature: (each Argument).signature))
        self.arguments = declared
        signature = Signature(unchecked: declared.map(\.signature.rawValue).joined())
        self.doc = doc
    }

    /// The signal without its Swift types, for tables and the XML.
    public var declaration: SignalDeclaration {
        SignalDeclaration(name: name, arguments: arguments, doc: doc)
    }

    /// This signal with `values` as its arguments, sent from the object at `path`.
    ///
    /// - Throws: `BusError` if libdbus cannot build the message.
    public func signal(_ values: repeat each Argument, at path: ObjectPath) throws(BusError) -> Message {
        var encoded: [Value] = []
        repeat encoded.append((each values).value)
        return try Message.signal(path: path, interface: interface, member: name, arguments: encoded)
    }

    /// The arguments of `message` if it is this signal with exactly the declared types; nil for
    /// any other message. The signature is compared before anything is decoded, so a message of
    /// another shape costs nothing more. Says nothing of who sent it: the caller checks the
    /// sender it trusts.
    public func decode(_ message: Message) -> (repeat each Argument)? {
        guard message.isSignal(interface, name), message.signature == signature, let values = try? message.arguments(),
            values.count == arguments.count
        else { return nil }
        var index = -1
        func next() -> Int {
            index += 1
            return index
        }
        do {
            return try (repeat (each Argument).decoded(values, at: next()))
        } catch {
            return nil
        }
    }

    /// A match rule (the D-Bus specification's) for this signal, from `sender` and at `path` (or
    /// at and below `pathNamespace`) where given, with string arguments fixed by position
    /// (`[0: "org.example.Name"]` is `arg0=…`). Quotes in a value are escaped as the specification
    /// requires.
    public func matchRule(
        sender: BusName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil, arguments fixed: [Int: String] = [:]
    ) -> String {
        var rule = "type='signal'"
        if let sender { rule += ",sender='\(sender)'" }
        if let path { rule += ",path='\(path)'" }
        if let pathNamespace { rule += ",path_namespace='\(pathNamespace)'" }
        rule += ",interface='\(interface)',member='\(name)'"
        for (position, value) in fixed.sorted(by: { $0.key < $1.key }) {
            let escaped = value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#)
            rule += ",arg\(position)='\(escaped)'"
        }
        return rule
    }
}

extension SignalDescription {
    /// The table's entry for a declared signal.
    public init(_ declaration: SignalDeclaration) {
        self.init(declaration.name, arguments: declaration.arguments.map { Argument($0.name, $0.signature) })
    }
}

/// A signal's declaration without its Swift types.
public struct SignalDeclaration: Sendable, Equatable {
    public let name: MemberName
    public let arguments: [ArgumentDeclaration]
    public let doc: String
}
