/// `org.freedesktop.DBus.ObjectManager` for objects exported with `managingObjects`: the
/// standard interface's table, and the signals that announce objects coming and going.
///
/// Every dictionary of properties comes from the objects' own interface tables, read through
/// their getters: nothing is described twice. The standard interfaces (`Properties`,
/// `Introspectable`, `Peer`) are left out of the dictionaries, so a reply over many objects
/// carries only what tells them apart.
extension ObjectServer {
    /// The `ObjectManager` interface answering at `path`.
    func objectManagerInterface(at path: ObjectPath) -> Interface {
        Interface(
            .objectManager,
            methods: [
                Method(
                    "GetManagedObjects",
                    outputs: [Argument("object_paths_interfaces_and_properties", .managedObjects)]
                ) { [unowned self] (_, reply: inout ReplyWriter) throws in
                    try self.writeManagedObjects(below: path, into: &reply)
                }
            ],
            signals: [
                SignalDescription(
                    "InterfacesAdded",
                    arguments: [
                        Argument("object_path", "o"), Argument("interfaces_and_properties", .interfacesAndProperties),
                    ]),
                SignalDescription(
                    "InterfacesRemoved", arguments: [Argument("object_path", "o"), Argument("interfaces", "as")]),
            ])
    }

    /// Announces the object at `path` with every property of its own interfaces, from the
    /// manager above it. Does nothing when no manager is above `path`.
    ///
    /// Like `GetManagedObjects`, marshalled by `WireEncoder` straight from the interface tables
    /// and validated once by libdbus: an object comes and goes with every BeginActivity and
    /// EndActivity, and libdbus's type writer cost several times more than the call itself.
    public func emitInterfacesAdded(at path: ObjectPath) throws(BusError) {
        guard let manager = manager(of: path), let own = ownInterfaces(at: path) else { return }
        var wire = RawMessage.signalHeader(
            path: manager, interface: .objectManager, member: .interfacesAdded, signature: .interfacesAddedArguments)
        wire.append(.objectPath(path))
        wire.appendInterfacesAndProperties(own)
        try send(wire)
    }

    /// Announces that the object at `path`, which had `interfaces`, is gone. Does nothing when
    /// no manager is above `path`.
    ///
    /// The signals for objects whose paths are as long and which had the same interfaces differ
    /// only in the path's characters: after the first, each is a copy with the path written in
    /// place (`RemovalSignals`).
    public func emitInterfacesRemoved(at path: ObjectPath, interfaces: [InterfaceName]) throws(BusError) {
        guard let manager = manager(of: path) else { return }
        guard connection.isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        if let copy = removalSignals.signal(manager: manager, path: path, interfaces: interfaces) {
            defer { copy.release() }
            connection.queue(copy)
            return
        }
        var wire = RawMessage.signalHeader(
            path: manager, interface: .objectManager, member: .interfacesRemoved,
            signature: .interfacesRemovedArguments)
        wire.append(.objectPath(path))
        wire.appendArray(of: .string) { names in
            for interface in interfaces { names.append(.string(interface.rawValue)) }
        }
        let message = try RawMessage.message(from: wire)
        defer { message.release() }
        removalSignals.remember(message, manager: manager, path: path, interfaces: interfaces)
        connection.queue(message)
    }

    private func send(_ wire: consuming WireEncoder) throws(BusError) {
        guard connection.isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        let message = try RawMessage.message(from: wire)
        defer { message.release() }
        connection.queue(message)
    }

    /// The nearest manager strictly above `path`.
    private func manager(of path: ObjectPath) -> ObjectPath? {
        // Managers are few (one here): comparing prefixes beats building every ancestor path.
        managers.filter { path.isDescendant(of: $0) }.max { $0.rawValue.utf8.count < $1.rawValue.utf8.count }
    }

    /// The own interfaces (standard ones left out) of the object at `path`.
    private func ownInterfaces(at path: ObjectPath) -> [Interface]? {
        if let own = subtreeInterfaces(at: path) { return own }
        return exportedInterfaces(at: path)
    }

    /// `GetManagedObjects`' answer, written one object at a time so a reply over tens of
    /// thousands of objects never exists as one value tree.
    private func writeManagedObjects(below manager: ObjectPath, into reply: inout ReplyWriter) throws(BusError) {
        let exported = exportedPaths.filter { $0.isDescendant(of: manager) }.sorted { $0.rawValue < $1.rawValue }
        let families = subtrees.filter { $0.key.isDescendant(of: manager) }.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { (prefix: $0.key, subtree: $0.value, names: $0.value.names()) }
        let objects = exported.count + families.reduce(0) { $0 + $1.names.count }
        reply.reserveCapacity(objects * managedObjectBytes + 4_096)
        let start = reply.count
        try reply.appendArray(of: .managedObjectEntry) { (entries: inout ReplyWriter) throws(BusError) in
            for path in exported {
                guard let own = exportedInterfaces(at: path) else { continue }
                entries.body.appendEntryKey(.objectPath(path))
                entries.body.appendInterfacesAndProperties(own)
            }
            for (prefix, subtree, names) in families {
                for name in names {
                    guard let own = subtree.interfaces(Substring(name)) else { continue }
                    entries.body.appendEntryKey(.objectPath(ObjectPath(unchecked: prefix.rawValue + "/" + name)))
                    entries.body.appendInterfacesAndProperties(own)
                }
            }
        }
        // An eighth more next time: pages reserved and never written cost no memory.
        if objects > 0 { managedObjectBytes = (reply.count - start) / objects * 9 / 8 + 1 }
    }
}

/// `InterfacesRemoved` signals kept as templates, one per manager, path length and interfaces.
final class RemovalSignals {
    private struct Key: Hashable {
        let manager: ObjectPath
        let pathLength: Int
        let interfaces: [InterfaceName]
    }

    private var templates: [Key: RawMessage] = [:]
    /// Templates kept at once: a family of objects has a handful of path lengths.
    static let limit = 16

    deinit {
        for template in templates.values { template.release() }
    }

    /// A copy of the kept signal of this shape with `path` written in, ready to send (the
    /// caller releases it); nil when none is kept.
    func signal(manager: ObjectPath, path: ObjectPath, interfaces: [InterfaceName]) -> RawMessage? {
        let key = Key(manager: manager, pathLength: path.rawValue.utf8.count, interfaces: interfaces)
        guard let template = templates[key], let copy = template.copy() else { return nil }
        guard let body = copy.bodyStart else {
            copy.release()
            return nil
        }
        var characters = path.rawValue
        characters.withUTF8 { utf8 in (body + 4).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count) }
        return copy
    }

    /// Keeps a copy of `signal`, just built for `path`, once its body is found to hold the path's
    /// characters where `signal(manager:path:interfaces:)` will write them.
    func remember(_ signal: RawMessage, manager: ObjectPath, path: ObjectPath, interfaces: [InterfaceName]) {
        let key = Key(manager: manager, pathLength: path.rawValue.utf8.count, interfaces: interfaces)
        guard templates[key] == nil, let body = signal.bodyStart else { return }
        var characters = path.rawValue
        let found = characters.withUTF8 { utf8 in
            body.loadUnaligned(as: UInt32.self) == UInt32(utf8.count).littleEndian
                && UnsafeRawBufferPointer(start: body + 4, count: utf8.count).elementsEqual(utf8)
        }
        guard found, let template = signal.copy() else { return }
        if templates.count == Self.limit {
            for kept in templates.values { kept.release() }
            templates.removeAll(keepingCapacity: true)
        }
        templates[key] = template
    }
}

extension WireEncoder {
    /// `a{sa{sv}}`: each interface with all its properties, read through its getters and
    /// written without building a tree of values (a reply over tens of thousands of objects
    /// would otherwise allocate and free one for each).
    fileprivate mutating func appendInterfacesAndProperties(_ interfaces: [Interface]) {
        appendArray(of: .interfaceEntry) { encoder in
            for interface in interfaces {
                encoder.appendEntryKey(.string(interface.name.rawValue))
                encoder.appendArray(of: .stringToVariantEntry) { encoder in
                    for property in interface.properties {
                        encoder.appendEntryKey(.string(property.name.rawValue))
                        encoder.appendVariant(property.get())
                    }
                }
            }
        }
    }
}

extension MemberName {
    fileprivate static let interfacesAdded: MemberName = "InterfacesAdded"
    fileprivate static let interfacesRemoved: MemberName = "InterfacesRemoved"
}

extension Signature {
    fileprivate static let managedObjects: Signature = "a{oa{sa{sv}}}"
    fileprivate static let managedObjectEntry = Signature(unchecked: "{oa{sa{sv}}}")
    fileprivate static let interfacesAndProperties: Signature = "a{sa{sv}}"
    fileprivate static let interfaceEntry = Signature(unchecked: "{sa{sv}}")
    fileprivate static let interfacesAddedArguments: Signature = "oa{sa{sv}}"
    fileprivate static let interfacesRemovedArguments: Signature = "oas"
}
