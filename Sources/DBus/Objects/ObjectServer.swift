/// Exports objects on a connection and answers every method call addressed to it.
///
/// Each object is a list of interface tables; the standard `Properties`, `Introspectable` and
/// `Peer` interfaces are added to every object and derived from those tables. Paths above an
/// exported object answer `Introspect` with their child nodes, so `busctl tree` finds it.
/// Calls run on the connection's dispatching thread.
public final class ObjectServer {
    /// The connection the objects are exported on.
    public let connection: Connection
    // Each exported object's interfaces with the standard ones appended, indexed once at
    // export: dispatch is then a few dictionary lookups, with nothing rebuilt per call.
    private(set) var objects: [ObjectPath: DispatchTable] = [:]
    // Each exported object's own interfaces, without the standard ones.
    private var exported: [ObjectPath: [Interface]] = [:]
    // Families of objects looked up when a call arrives, each below its own path.
    var subtrees: [ObjectPath: Subtree] = [:]
    // Objects that are an org.freedesktop.DBus.ObjectManager for everything below them: a
    // handful at most, walked for every object announced, where a list is cheaper than a set.
    var managers: [ObjectPath] = []
    // Room per object that a GetManagedObjects reply reserves, so that its buffer is not grown
    // (and copied) a dozen times: learned from the last reply, and until then 1 KiB, more than
    // an activity object takes.
    var managedObjectBytes = 1_024
    // The object the last call went to: most calls go to the same one, found by one strcmp.
    private var lastCalled: (path: CName, table: DispatchTable)?
    private let senders = SenderNames()
    private let emptyReplies = EmptyReplies()
    // Every signal of the standard interfaces is made here (`emitPropertiesChanged`,
    // `emitInterfacesAdded`, `emitInterfacesRemoved`).
    let signals = SignalBuilder()

    /// Starts answering method calls on `connection`, the one server it may have.
    public init(connection: Connection) {
        self.connection = connection
        // Without this libdbus answers org.freedesktop.DBus.Peer itself, on any path and with
        // any arguments; the object's own table checks signatures and paths like every other call.
        connection.raw.routePeerMessages(true)
        // Unowned: deinit removes the handler, so it never outlives this server.
        connection.setMethodCallHandler { [unowned self] call in self.handle(call) }
    }

    deinit {
        connection.setMethodCallHandler(nil)
    }

    /// Exports `interfaces` at `path`, replacing what was there. With `managingObjects`, the
    /// object is also an `org.freedesktop.DBus.ObjectManager` for every object below it.
    public func export(_ interfaces: [Interface], at path: ObjectPath, managingObjects: Bool = false) {
        managers.removeAll { $0 == path }
        if managingObjects { managers.append(path) }
        objects[path] = DispatchTable(interfaces + standardInterfaces(interfaces, of: nil, at: path))
        exported[path] = interfaces
        lastCalled = nil
    }

    /// Removes the object at `path`.
    public func unexport(_ path: ObjectPath) {
        objects[path] = nil
        exported[path] = nil
        managers.removeAll { $0 == path }
        lastCalled = nil
    }

    /// Exports a family of objects, one level below `prefix`, that come and go at run time
    /// without being exported one by one (sd-bus's fallback vtables): a call to
    /// `prefix/NAME` finds its object through `subtree` when it arrives, and one to a name
    /// the subtree does not know gets `UnknownObject`.
    public func exportSubtree(_ subtree: Subtree, under prefix: ObjectPath) {
        subtrees[prefix] = subtree
    }

    /// The paths of the exported objects (not those of subtrees).
    var exportedPaths: Dictionary<ObjectPath, [Interface]>.Keys { exported.keys }

    /// The own interfaces of the exported object at `path`.
    func exportedInterfaces(at path: ObjectPath) -> [Interface]? { exported[path] }

    /// The standard interfaces every object at `path` with `own` interfaces, whose getters read
    /// `object`, answers too.
    private func standardInterfaces(_ own: [Interface], of object: AnyObject?, at path: ObjectPath) -> [Interface] {
        var standard = [propertiesInterface(own, of: object), introspectableInterface(path), peerInterface]
        if managers.contains(path) { standard.append(objectManagerInterface(at: path)) }
        return standard
    }

    // MARK: - Signals

    /// Emits `signal` from `path`. The arguments have the declared Swift types, so the message
    /// has the declared signature.
    public func emit<each Argument>(
        _ signal: SignalDescriptor<repeat each Argument>, _ arguments: repeat each Argument, at path: ObjectPath
    ) throws(BusError) {
        try connection.send(signal.signal(repeat each arguments, at: path))
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for the properties `names` of
    /// `interface` at `path`, their values read through the interface table's getters at
    /// once: a property that `invalidates` goes in the invalidated list, a `const` one or one
    /// whose changes are not announced is left out. Does nothing when none is left.
    ///
    /// - Throws: `UnknownObject`, `UnknownInterface` or `UnknownProperty` for a name the
    ///   object does not have; a send failure.
    public func emitPropertiesChanged(
        _ names: [MemberName], of interface: InterfaceName, at path: ObjectPath
    ) throws(BusError) {
        // The object's own tables only: no dispatch table is built for a signal.
        let interfaces: [Interface]
        let object: AnyObject?
        if let own = exported[path] {
            (interfaces, object) = (own, nil)
        } else if let found = subtreeObject(at: path) {
            (interfaces, object) = (found.interfaces, found.object)
        } else {
            throw BusError(.unknownObject, "no object at \(path)")
        }
        guard let own = interfaces.first(where: { $0.name == interface }) else {
            throw BusError(.unknownInterface, "object \(path) has no interface \(interface)")
        }
        var changed: [(MemberName, Value)] = []
        var invalidated: [MemberName] = []
        for name in names {
            guard let property = own.properties.first(where: { $0.name == name }) else {
                throw BusError(.unknownProperty, "interface \(interface) has no property \(name)")
            }
            switch property.changeSignal {
            case .emitsValue: changed.append((name, property.value(of: object)))
            case .invalidates: invalidated.append(name)
            case .constant, .none: break
            }
        }
        try emitPropertiesChanged(interface: interface, at: path, changed: changed, invalidated: invalidated)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` with the given new values, in
    /// the order given. Does nothing when both lists are empty.
    public func emitPropertiesChanged(
        interface: InterfaceName, at path: ObjectPath, changed: [(MemberName, Value)],
        invalidated: [MemberName] = []
    ) throws(BusError) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        try connection.send(
            try signals.propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated))
    }

    // MARK: - Dispatch

    /// Answers the method call `call`, libdbus's message, valid for the duration.
    private func handle(_ call: RawMessage) {
        let wantsReply = !call.noReply
        let reply: Message?
        do {
            let values: [Value]
            do {
                values = try dispatch(call)
            } catch is ReplyWritten {
                return
            }
            guard wantsReply else { return }
            guard let reply = emptyReplies.reply(to: call) else { throw BusError.outOfMemory }
            if !values.isEmpty { _ = try Message.append(values, to: reply.raw, signatureLength: 0) }
            connection.queue(reply)
            return
        } catch let error as BusError {
            reply = wantsReply ? try? Message.errorReply(to: call, error) : nil
        } catch {
            reply = wantsReply ? try? Message.errorReply(to: call, BusError(.failed, "\(error)")) : nil
        }
        if let reply { connection.queue(reply) }
    }

    // Works on libdbus's C strings of the header: no Swift string is made for a call that
    // succeeds, only for the text of an error.
    private func dispatch(_ call: RawMessage) throws -> [Value] {
        guard let path = call.path, let member = call.member else {
            throw BusError(.unknownMethod, "method call without a path or member")
        }
        let table = try table(at: path)
        let method: DispatchTable.Entry
        if let name = call.interface {
            guard let methods = table.methods(of: name) else {
                throw BusError(
                    .unknownInterface, "object \(String(cString: path)) has no interface \(String(cString: name))")
            }
            guard let found = DispatchTable.method(member, in: methods) else {
                throw BusError(
                    .unknownMethod, "interface \(String(cString: name)) has no method \(String(cString: member))")
            }
            method = found
        } else {
            guard let found = table.method(named: member) else {
                throw BusError(
                    .unknownMethod, "object \(String(cString: path)) has no method \(String(cString: member))")
            }
            method = found
        }
        let signature = call.signature
        guard method.inputSignature.matches(signature) else {
            throw BusError(
                .invalidArgs,
                "\(String(cString: member)) expects arguments of signature '\(method.method.inputSignature)', "
                    + "got '\(signature.map { String(cString: $0) } ?? "")'")
        }
        let arguments = try call.arguments(count: method.argumentCount)
        if let writer = method.method.replyWriter {
            let signature = Signature(unchecked: method.method.outputs.map(\.type.rawValue).joined())
            try connection.sendReply(to: call, signature: signature) { (reply) throws in
                try writer(MethodCall(raw: call, arguments: arguments, senders: senders), &reply)
            }
            throw ReplyWritten()
        }
        return try method.handler(MethodCall(raw: call, arguments: arguments, senders: senders))
    }

    /// Thrown once a method has sent its own reply: there is nothing left to send.
    private struct ReplyWritten: Error {}

    /// The dispatch table for a call to `rawPath`.
    private func table(at rawPath: UnsafePointer<CChar>) throws(BusError) -> DispatchTable {
        if let lastCalled, lastCalled.path.matches(rawPath) { return lastCalled.table }
        let path = ObjectPath(unchecked: String(cString: rawPath))
        let table = try table(at: path)
        if objects[path] != nil { lastCalled = (CName(path.rawValue), table) }
        return table
    }

    /// The dispatch table at `path`: an exported object's own interfaces plus the standard
    /// ones, or just `Introspectable` and `Peer` for a node above an exported object.
    func table(at path: ObjectPath) throws(BusError) -> DispatchTable {
        if let table = objects[path] { return table }
        if let found = subtreeObject(at: path) {
            return DispatchTable(found.interfaces + standardInterfaces(found.interfaces, of: found.object, at: path))
        }
        guard hasDescendants(path) else {
            throw BusError(.unknownObject, "no object at \(path)")
        }
        // Nodes above objects answer only Introspect and Ping: rare enough to build on demand.
        return DispatchTable([introspectableInterface(path), peerInterface])
    }

    /// The subtree's object at `path` with its own interfaces; nil if no subtree has one there.
    func subtreeObject(at path: ObjectPath) -> SubtreeObject? {
        guard let (prefix, name) = path.parentAndName, let subtree = subtrees[prefix] else { return nil }
        return subtree.object(name)
    }

    /// Whether any object lives below `path`.
    private func hasDescendants(_ path: ObjectPath) -> Bool {
        objects.keys.contains { $0.isDescendant(of: path) }
            || subtrees.contains { prefix, subtree in
                (prefix == path || prefix.isDescendant(of: path)) && !subtree.isEmpty()
            }
    }

}
