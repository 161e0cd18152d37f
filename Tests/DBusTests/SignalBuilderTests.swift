@testable import DBus
import Testing

/// The one door every signal of the object server goes through: whichever way it makes a
/// signal (a copy, a patch of kept bytes, a full build), the signal is byte for byte the one
/// libdbus's own type writer builds for the same contents.
@Suite struct SignalBuilderTests {
    static let interface: InterfaceName = "io.github.netactivity.NetActivity1.Activity"
    static let manager: ObjectPath = "/io/github/netactivity/NetActivity1"

    static func path(_ id: Int) -> ObjectPath { ObjectPath(unchecked: "\(manager.rawValue)/activity/\(id)") }

    /// `PropertiesChanged` as libdbus builds it, value by value.
    static func libdbusPropertiesChanged(
        _ path: ObjectPath, _ changed: [(MemberName, Value)], invalidated: [MemberName] = [],
        interface: InterfaceName = interface
    ) throws -> [UInt8] {
        try Message.signal(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [
                .string(interface.rawValue), .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: "s", invalidated.map { .string($0.rawValue) }),
            ]
        ).wireBytes
    }

    static func libdbusInterfacesRemoved(_ path: ObjectPath, _ interfaces: [InterfaceName]) throws -> [UInt8] {
        try Message.signal(
            path: manager, interface: .objectManager, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .array(element: "s", interfaces.map { .string($0.rawValue) })]
        ).wireBytes
    }

    static func progress(_ completed: UInt64, _ total: UInt64) -> [(MemberName, Value)] {
        [("Completed", .uint64(completed)), ("Total", .uint64(total)), ("Fraction", .double(0.5))]
    }

    @Test func theSameContentsAtTheSamePathAreACopy() throws {
        let builder = SignalBuilder()
        let changed: [(MemberName, Value)] = [("Active", .boolean(true)), ("Count", .uint32(1))]
        let first = try builder.propertiesChanged(path: Self.manager, interface: Self.interface, changed: changed, invalidated: [])
        #expect(builder.lastWay == .built)
        let second = try builder.propertiesChanged(path: Self.manager, interface: Self.interface, changed: changed, invalidated: [])
        #expect(builder.lastWay == .copied)
        #expect(first !== second)
        #expect(second.serial == 0, "a copy is unsent: the connection numbers it")
        #expect(second.wireBytes == (try Self.libdbusPropertiesChanged(Self.manager, changed)))
    }

    @Test func numbersAndAPathAsLongArePatchedInTheBuildersOwnBytes() throws {
        let builder = SignalBuilder()
        _ = try builder.propertiesChanged(
            path: Self.path(17), interface: Self.interface, changed: Self.progress(0, 0), invalidated: [])
        var sent: [(Message, [UInt8])] = []
        for (id, completed, total) in [(42, 1_000, 1 << 50), (17, .max, .max), (99, 0, 7)] as [(Int, UInt64, UInt64)] {
            let changed = Self.progress(completed, total)
            let signal = try builder.propertiesChanged(
                path: Self.path(id), interface: Self.interface, changed: changed, invalidated: [])
            #expect(builder.lastWay == .patched)
            let expected = try Self.libdbusPropertiesChanged(Self.path(id), changed)
            #expect(signal.wireBytes == expected, "activity \(id)")
            #expect(signal.path == Self.path(id))
            sent.append((signal, expected))
        }
        // Later patches never reach a message already made.
        for (signal, expected) in sent { #expect(signal.wireBytes == expected) }
    }

    @Test func anotherShapeIsBuiltInFull() throws {
        let builder = SignalBuilder()
        _ = try builder.propertiesChanged(
            path: Self.path(17), interface: Self.interface, changed: Self.progress(0, 0), invalidated: [])
        let others: [(ObjectPath, [(MemberName, Value)], InterfaceName)] = [
            (Self.path(170), Self.progress(1, 2), Self.interface),  // a longer path
            (Self.path(18), [("Completed", .uint32(1)), ("Total", .uint64(2)), ("Fraction", .double(0.5))], Self.interface),
            (Self.path(18), Self.progress(1, 2), "io.github.netactivity.Other1"),
            (Self.path(18), Self.progress(1, 2) + [("Rate", .double(3))], Self.interface),
        ]
        for (path, changed, interface) in others {
            let signal = try builder.propertiesChanged(path: path, interface: interface, changed: changed, invalidated: [])
            #expect(builder.lastWay == .built, "\(path) \(changed)")
            #expect(signal.wireBytes == (try Self.libdbusPropertiesChanged(path, changed, interface: interface)))
        }
    }

    @Test func stringsArePartOfTheShapeAndInvalidatedNamesToo() throws {
        let builder = SignalBuilder()
        let attribution: [(MemberName, Value)] = [("ProcessID", .uint32(7)), ("Application", .string("firefox"))]
        _ = try builder.propertiesChanged(path: Self.path(11), interface: Self.interface, changed: attribution, invalidated: [])
        // The same owner's next object: the same string, another path and number.
        let next: [(MemberName, Value)] = [("ProcessID", .uint32(8)), ("Application", .string("firefox"))]
        let patched = try builder.propertiesChanged(path: Self.path(12), interface: Self.interface, changed: next, invalidated: [])
        #expect(builder.lastWay == .patched)
        #expect(patched.wireBytes == (try Self.libdbusPropertiesChanged(Self.path(12), next)))
        let other: [(MemberName, Value)] = [("ProcessID", .uint32(8)), ("Application", .string("firefux"))]
        let built = try builder.propertiesChanged(path: Self.path(12), interface: Self.interface, changed: other, invalidated: [])
        #expect(builder.lastWay == .built)
        #expect(built.wireBytes == (try Self.libdbusPropertiesChanged(Self.path(12), other)))

        for count in [UInt32(1), 2] {
            let changed: [(MemberName, Value)] = [("Count", .uint32(count))]
            let signal = try builder.propertiesChanged(
                path: Self.manager, interface: Self.interface, changed: changed, invalidated: ["Activities"])
            #expect(builder.lastWay == (count == 1 ? .built : .patched))
            #expect(signal.wireBytes == (try Self.libdbusPropertiesChanged(Self.manager, changed, invalidated: ["Activities"])))
        }
    }

    @Test func theLeastRecentlyUsedSignalGoesFirst() throws {
        let builder = SignalBuilder()
        func send(_ count: UInt32) throws -> SignalBuilder.Way {
            _ = try builder.propertiesChanged(
                path: Self.manager, interface: Self.interface, changed: [("Count", .uint32(count))], invalidated: [])
            return builder.lastWay
        }
        for count in 0..<UInt32(SignalBuilder.recentLimit) { #expect(try send(count) != .copied) }
        // Using the oldest makes it the most recent: the next one kept evicts the second.
        #expect(try send(0) == .copied)
        let next = UInt32(SignalBuilder.recentLimit)
        #expect(try send(next) == .patched)
        #expect(try send(0) == .copied)
        #expect(try send(1) == .patched)
        #expect(try send(next) == .copied)
    }

    @Test func removalsOfPathsAsLongArePatched() throws {
        let builder = SignalBuilder()
        let interfaces: [InterfaceName] = [Self.interface]
        for (id, way) in [(17, SignalBuilder.Way.built), (42, .patched), (170, .built), (171, .patched), (18, .patched)] {
            let signal = try builder.interfacesRemoved(manager: Self.manager, path: Self.path(id), interfaces: interfaces)
            #expect(builder.lastWay == way, "activity \(id)")
            #expect(signal.wireBytes == (try Self.libdbusInterfacesRemoved(Self.path(id), interfaces)))
            #expect(try signal.arguments().first == .objectPath(Self.path(id)))
        }
        let other: [InterfaceName] = ["a.B"]
        let signal = try builder.interfacesRemoved(manager: Self.manager, path: Self.path(19), interfaces: other)
        #expect(builder.lastWay == .built)
        #expect(signal.wireBytes == (try Self.libdbusInterfacesRemoved(Self.path(19), other)))
    }
}

/// A message handle gives its reference back by itself: what it made is freed once, when the
/// last owner lets go.
@Suite struct OwnedMessageTests {
    @Test func aMessageOutlivesTheHandleItWasCopiedFrom() throws {
        let original = try Message.signal(path: "/a", interface: "a.b", member: "C", arguments: [.string("kept")])
        var copies: [Message] = []
        for _ in 0..<3 {
            guard let copy = original.raw.copy() else {
                Issue.record("out of memory")
                return
            }
            copies.append(Message(consuming: copy))
        }
        for copy in copies { #expect(try copy.arguments() == [.string("kept")]) }
    }

    @Test func aBorrowedMessageTakesAReferenceOfItsOwn() throws {
        var borrowed: Message?
        do {
            let original = try Message.signal(path: "/a", interface: "a.b", member: "C", arguments: [.uint32(9)])
            borrowed = Message(borrowing: original.raw)
        }
        #expect(try borrowed?.arguments() == [.uint32(9)])
    }
}
