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
                SignalDescription(ObjectManagerInterface.interfacesAdded.declaration),
                SignalDescription(ObjectManagerInterface.interfacesRemoved.declaration),
            ])
    }

    /// Announces the object at `path` with every property of its own interfaces, from the
    /// manager above it. Does nothing when no manager is above `path`.
    ///
    /// Like `GetManagedObjects`, marshalled by `WireEncoder` straight from the interface tables
    /// and validated once by libdbus: an object comes and goes with every BeginActivity and
    /// EndActivity, and libdbus's type writer costs several times more than the call itself.
    public func emitInterfacesAdded(at path: ObjectPath) throws(BusError) {
        guard let manager = manager(of: path), let (own, object) = ownInterfaces(at: path) else { return }
        guard connection.isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        connection.queue(
            try signals.interfacesAdded(manager: manager, path: path) { $0.appendInterfacesAndProperties(own, of: object) })
    }

    /// Announces that the object at `path`, which had `interfaces`, is gone. Does nothing when
    /// no manager is above `path`.
    ///
    /// The signals for objects whose paths are as long and which had the same interfaces differ
    /// only in the path's characters: after the first, each is the last one's bytes with the path
    /// written anew (`SignalBuilder`).
    public func emitInterfacesRemoved(at path: ObjectPath, interfaces: [InterfaceName]) throws(BusError) {
        guard let manager = manager(of: path) else { return }
        guard connection.isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        connection.queue(try signals.interfacesRemoved(manager: manager, path: path, interfaces: interfaces))
    }

    /// The nearest manager strictly above `path`.
    private func manager(of path: ObjectPath) -> ObjectPath? {
        // Managers are few (one here): comparing prefixes beats building every ancestor path,
        // and a plain loop allocates nothing, where a filter would make a set per signal.
        var nearest: ObjectPath?
        for manager in managers where path.isDescendant(of: manager) {
            if let found = nearest, found.rawValue.utf8.count >= manager.rawValue.utf8.count { continue }
            nearest = manager
        }
        return nearest
    }

    /// The own interfaces (standard ones left out) of the object at `path`, and the object their
    /// getters read (nil for an object exported on its own).
    private func ownInterfaces(at path: ObjectPath) -> (interfaces: [Interface], object: AnyObject?)? {
        if let found = subtreeObject(at: path) { return (found.interfaces, found.object) }
        return exportedInterfaces(at: path).map { ($0, nil) }
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
                entries.body.appendInterfacesAndProperties(own, of: nil)
            }
            for (prefix, subtree, names) in families {
                for name in names {
                    guard let object = subtree.lookUp(Substring(name)) else { continue }
                    entries.body.appendEntryKey(.objectPath(ObjectPath(unchecked: prefix.rawValue + "/" + name)))
                    entries.body.appendInterfacesAndProperties(subtree.interfaces, of: object)
                }
            }
        }
        // An eighth more next time: pages reserved and never written cost no memory.
        if objects > 0 { managedObjectBytes = (reply.count - start) / objects * 9 / 8 + 1 }
    }
}

extension WireEncoder {
    /// `a{sa{sv}}`: each interface with all its properties, read through its getters (handed
    /// `object`, nil for an object exported on its own) and
    /// written without building a tree of values (a reply over tens of thousands of objects
    /// would otherwise allocate and free one for each).
    mutating func appendInterfacesAndProperties(_ interfaces: [Interface], of object: AnyObject?) {
        appendArray(of: .interfaceEntry) { encoder in
            for interface in interfaces {
                encoder.appendEntryKey(.string(interface.name.rawValue))
                encoder.appendArray(of: .stringToVariantEntry) { encoder in
                    for property in interface.properties {
                        encoder.appendEntryKey(.string(property.name.rawValue))
                        encoder.appendVariant(property.value(of: object))
                    }
                }
            }
        }
    }
}

extension Signature {
    fileprivate static let managedObjects: Signature = "a{oa{sa{sv}}}"
    fileprivate static let managedObjectEntry = Signature(unchecked: "{oa{sa{sv}}}")
    fileprivate static let interfaceEntry = Signature(unchecked: "{sa{sv}}")
}
