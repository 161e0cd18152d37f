import BusTestSupport
import DBus
import Foundation
import Testing

/// The bus's own interface, declared with typed descriptors: name-owner changes decoded once,
/// forged ones refused, match rules made from the declaration, asynchronous calls decoded.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct BusDriverTests {
    @Test func matchRulesAreMadeFromTheDeclaration() {
        #expect(
            NameOwnerChange.matchRule(for: "org.freedesktop.PackageKit")
                == "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.freedesktop.PackageKit'")
        #expect(NameOwnerChange.departuresMatchRule.hasSuffix(",member='NameOwnerChanged',arg2=''"))
        let quoted = BusDriver.nameLost.matchRule(arguments: [0: "it's"])
        #expect(quoted == #"type='signal',interface='org.freedesktop.DBus',member='NameLost',arg0='it'\''s'"#)
        #expect(BusDriver.nameOwnerChanged.signature == "sss")
        #expect(PropertiesInterface.propertiesChanged.signature == "sa{sv}as")
        #expect(BusDriver.getConnectionCredentials.declaration.outputSignature == "a{sv}")
    }

    @Test func aSignalOfOtherTypesOrAnotherMemberDecodesToNothing() throws {
        let right = try Message.signal(
            path: BusDriver.path, interface: .bus, member: "NameOwnerChanged",
            arguments: [.string("a.b"), .string(""), .string(":1.4")])
        #expect(BusDriver.nameOwnerChanged.decode(right).map { [$0, $1, $2] } == ["a.b", "", ":1.4"])
        let wrongTypes = try Message.signal(
            path: BusDriver.path, interface: .bus, member: "NameOwnerChanged",
            arguments: [.string("a.b"), .uint32(1), .string(":1.4")])
        #expect(BusDriver.nameOwnerChanged.decode(wrongTypes) == nil)
        let tooFew = try Message.signal(
            path: BusDriver.path, interface: .bus, member: "NameOwnerChanged", arguments: [.string("a.b")])
        #expect(BusDriver.nameOwnerChanged.decode(tooFew) == nil)
        let other = try Message.signal(
            path: BusDriver.path, interface: .bus, member: "NameLost", arguments: [.string("a.b")])
        #expect(BusDriver.nameOwnerChanged.decode(other) == nil)
        #expect(BusDriver.nameLost.decode(other) == "a.b")
        // Not from the bus (no sender at all here): never a name-owner change.
        #expect(NameOwnerChange(right) == nil)
    }

    @Test func ownerChangesComeFromTheBusAndForgedOnesAreRefused() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let watcher = try Connection(.address(bus.address))
        let name: BusName = "io.github.netactivity.Followed"
        try watcher.addMatch(NameOwnerChange.matchRule(for: name))
        // A peer sending its own NameOwnerChanged, which the watcher also subscribes to.
        try watcher.addMatch("type='signal',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        let forger = try Connection(.address(bus.address))
        try forger.send(
            .signal(
                path: BusDriver.path, interface: .bus, member: "NameOwnerChanged",
                arguments: [.string(name.rawValue), .string(""), .string(":1.999")]))
        forger.flush()
        let forged = try nextMessage(on: watcher, "the forged signal") { $0.sender == forger.uniqueName }
        #expect(NameOwnerChange(forged) == nil)

        let owner = try Connection(.address(bus.address))
        #expect(try owner.requestName(name, options: .doNotQueue) == .primaryOwner)
        let came = try nextMessage(on: watcher, "the name's arrival") { NameOwnerChange($0)?.name == name }
        #expect(NameOwnerChange(came) == nil ? false : NameOwnerChange(came)!.newOwner == owner.uniqueName)
        #expect(NameOwnerChange(came)?.oldOwner == .some(nil))
        try owner.releaseName(name)
        let left = try nextMessage(on: watcher, "the name's departure") { NameOwnerChange($0)?.name == name }
        #expect(NameOwnerChange(left)?.newOwner == .some(nil))
        #expect(NameOwnerChange(left)?.oldOwner == owner.uniqueName)
    }

    @Test func asynchronousCallsToTheBusAreDecodedOnTheLoop() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Connection(.address(bus.address))
        let loop = try EventLoop()
        loop.attach(connection)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let results = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let unique = connection.uniqueName.rawValue
        // On the loop's thread, where the replies are dispatched: a timer may be scheduled only there.
        try thread.sync {
            connection.callBus(BusDriver.getNameOwner, unique) { result in
                results.withLock { $0.append((try? result.get()) ?? "failed") }
                done.signal()
            }
            connection.callBus(BusDriver.getNameOwner, "io.github.netactivity.Nobody") { result in
                results.withLock {
                    if case .failure(let error) = result { $0.append(error.name.rawValue) } else { $0.append("owned?") }
                }
                done.signal()
            }
            connection.callBus(BusDriver.getConnectionUnixProcessID, unique) { result in
                results.withLock { $0.append((try? result.get()) == UInt32(getpid()) ? "pid" : "wrong pid") }
                done.signal()
            }
        }
        for what in ["owner", "no owner", "pid"] { try wait(done, for: what) }
        #expect(results.withLock { $0 } == [unique, ErrorName.nameHasNoOwner.rawValue, "pid"])
    }

    @Test func aFollowerHearsTheFirstAnswerThenEveryChangeInOrder() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Connection(.address(bus.address))
        let loop = try EventLoop()
        loop.attach(connection)
        let heard = Locked<[String]>([])
        let name: BusName = "io.github.netactivity.Followed"
        let follower = Locked<NameOwnerFollower?>(nil)
        connection.addFilter(for: .signal) { message in
            follower.withLock { $0 }?.handle(message)
            return false
        }
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        try thread.sync {
            let made = try NameOwnerFollower(name, on: connection) { owner in
                heard.withLock { $0.append(owner?.rawValue ?? "none") }
            }
            follower.withLock { $0 = made }
        }
        try waitUntil("the first answer") { heard.withLock { $0 } == ["none"] }
        let owner = try Connection(.address(bus.address))
        #expect(try owner.requestName(name, options: .doNotQueue) == .primaryOwner)
        try waitUntil("the owner") { heard.withLock { $0 } == ["none", owner.uniqueName.rawValue] }
        try owner.releaseName(name)
        try waitUntil("the owner's going") { heard.withLock { $0 } == ["none", owner.uniqueName.rawValue, "none"] }
        #expect(try thread.sync { follower.withLock { $0 }?.owner } == nil)
    }
}
