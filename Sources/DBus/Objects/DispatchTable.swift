/// One object's interfaces in dispatch order, with their methods listed for lookup by the C
/// strings of a call's header. Where two interfaces (or two methods of one interface) share a
/// name, the first one wins, as the specification's linear search in that order finds.
///
/// Built once when an object is exported, so that dispatch is a few comparisons with nothing
/// rebuilt per call. Classes, not structs: a lookup hands out one reference instead of copying,
/// and retaining, every field.
final class DispatchTable {
    final class Entry {
        let name: CName
        let method: Method
        /// `method.handler`, kept apart so a call retains the closure alone, not the whole method.
        let handler: (borrowing MethodCall) throws -> [Value]
        /// `method.inputSignature`, joined once here rather than on every call.
        let inputSignature: CName
        /// How many complete types `inputSignature` holds: the values a matching call carries.
        let argumentCount: Int

        init(_ method: Method) {
            name = CName(method.name.rawValue)
            self.method = method
            handler = method.handler
            inputSignature = CName(method.inputSignature.rawValue)
            argumentCount = method.inputSignature.completeTypes.count
        }
    }

    /// Every interface, the object's own first.
    let interfaces: [Interface]
    // The first interface of each name, in order, with the first method of each name.
    private let byInterface: [(name: CName, methods: [Entry])]
    // For calls without an interface field: the first method of each name over all interfaces.
    private let byMember: [Entry]

    init(_ interfaces: [Interface]) {
        self.interfaces = interfaces
        var byInterface: [(name: CName, methods: [Entry])] = []
        var byMember: [Entry] = []
        var seenInterfaces = Set<InterfaceName>()
        var seenMembers = Set<MemberName>()
        for interface in interfaces {
            var methods: [Entry] = []
            var seen = Set<MemberName>()
            for method in interface.methods {
                let entry = Entry(method)
                if seen.insert(method.name).inserted { methods.append(entry) }
                if seenMembers.insert(method.name).inserted { byMember.append(entry) }
            }
            if seenInterfaces.insert(interface.name).inserted {
                byInterface.append((CName(interface.name.rawValue), methods))
            }
        }
        self.byInterface = byInterface
        self.byMember = byMember
    }

    /// The methods of the first interface called `name`, or nil if the object has none.
    func methods(of name: UnsafePointer<CChar>) -> [Entry]? {
        byInterface.first { $0.name.matches(name) }?.methods
    }

    /// The method called `name` in the first interface that has one.
    func method(named name: UnsafePointer<CChar>) -> Entry? { Self.method(name, in: byMember) }

    /// The method called `name` among `methods`.
    static func method(_ name: UnsafePointer<CChar>, in methods: [Entry]) -> Entry? {
        methods.first { $0.name.matches(name) }
    }
}
