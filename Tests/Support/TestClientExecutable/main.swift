import DBus
#if canImport(Glibc)
import Glibc
#endif

// na-testclient: a long-lived client of io.github.netactivity.NetActivity1 for the service's
// end-to-end tests. It pushes the shared counter and begins tracked activities, prints
// "ready <unique name>", then holds its connection open doing nothing until it is killed, so
// a test can make a real client process vanish (SIGKILL) while it owns activities. Foreign
// tools (busctl, gdbus, dbus-send) exit right after their one call and cannot play this part.
//
// Usage: na-testclient --address ADDR [--push N] [--begin LABEL] [--count N]
//        na-testclient --address ADDR --random SEED --ops N [--stop-at K]
// Exit status 2 for a usage error, 1 when a call fails (the error is on stderr).
//
// Random mode (the fault tests' churn): after "ready <unique name>", N calls chosen by a
// generator seeded with SEED (begin, update, end, push, pop, and calls on ids it does not own),
// each awaited, so the client knows exactly what it holds. It then prints
// "holding NET ID:COMPLETED:TOTAL:LABEL ..." (NET = its successful pushes minus successful
// pops; its live activities by id) and waits to be killed. With --stop-at K it stops before
// call K instead: it sends a burst of activity calls without awaiting them (the service answers
// a client that is gone by the time the replies arrive), prints "holding" with the counter
// exact, and waits for SIGKILL.

let service: BusName = "io.github.netactivity.NetActivity1"
let object: ObjectPath = "/io/github/netactivity/NetActivity1"
let interface: InterfaceName = "io.github.netactivity.NetActivity1"

func fail(_ text: String, status: Int32) -> Never {
    var line = "na-testclient: \(text)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}

// MARK: - Command line

var address: String?
var pushes = 0
var label = "na-testclient"
var activities = 0
var randomSeed: UInt64?
var randomOps = 0
var stopAt: Int?
var rest = CommandLine.arguments.dropFirst()
while let flag = rest.popFirst() {
    guard let value = rest.popFirst() else { fail("\(flag) needs a value", status: 2) }
    switch flag {
    case "--address": address = value
    case "--push": pushes = Int(value) ?? -1
    case "--begin": label = value
    case "--count": activities = Int(value) ?? -1
    case "--random": randomSeed = UInt64(value) ?? { fail("--random takes a number", status: 2) }()
    case "--ops": randomOps = Int(value) ?? -1
    case "--stop-at": stopAt = Int(value) ?? -1
    default: fail("unknown option '\(flag)'", status: 2)
    }
}
guard let address, pushes >= 0, activities >= 0, randomOps >= 0, (stopAt ?? 0) >= 0 else {
    fail(
        "usage: na-testclient --address ADDR [--push N] [--begin LABEL] [--count N]"
            + " | --random SEED --ops N [--stop-at K]",
        status: 2)
}

// MARK: - Calls

/// Sends every call at once, then waits for all replies: a thousand round trips would make
/// the tests slow on a busy machine.
func callAll(_ calls: [Message], on connection: Connection) {
    var waiting = Set<UInt32>()
    do {
        for call in calls { waiting.insert(try connection.send(call)) }
    } catch {
        fail("cannot send: \(error)", status: 1)
    }
    connection.flush()
    while !waiting.isEmpty {
        guard let message = connection.readMessage(timeout: .seconds(60)) else {
            fail("\(waiting.count) replies missing after 60 s", status: 1)
        }
        guard waiting.remove(message.replySerial) != nil else { continue }
        if let error = message.error { fail("a call failed: \(error)", status: 1) }
    }
}

let connection: Connection
do {
    connection = try Connection(.address(address))
} catch {
    fail("cannot connect to \(address): \(error)", status: 1)
}

do {
    let push = try (0..<pushes).map { _ in
        try Message.methodCall(destination: service, path: object, interface: interface, member: "Push")
    }
    let begin = try (0..<activities).map { _ in
        try Message.methodCall(
            destination: service, path: object, interface: interface, member: "BeginActivity",
            arguments: [.string(label)])
    }
    callAll(push + begin, on: connection)
} catch {
    fail("cannot build a call: \(error)", status: 1)
}

func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

say("ready \(connection.uniqueName.rawValue)")
if let randomSeed {
    var walk = RandomWalk(seed: randomSeed, connection: connection)
    walk.run(operations: randomOps, stoppingAt: stopAt)
    say(walk.holding)
}

// Hold the connection until killed; nothing here wakes up on its own.
while true {
    pause()
}
