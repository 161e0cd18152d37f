import BusTestSupport
import DBus

/// The random mode of na-testclient: a seeded sequence of calls whose every reply is awaited,
/// so the client knows exactly what it holds at the end.
///
/// Pops are sent whether or not this client pushed (popping someone else's push is allowed):
/// a successful Pop counts against `net`, a refused one (NotActive) changes nothing, so the sum of
/// every client's `net` is the shared counter.
struct RandomWalk {
    private var generator: SeededGenerator
    private let seed: UInt64
    private let connection: Connection
    /// Successful pushes minus successful pops.
    private var net = 0
    /// Live activities by id: label, completed, total.
    private var live: [UInt32: (label: String, completed: UInt64, total: UInt64)] = [:]
    private var highestID: UInt32 = 0
    private var labels = 0

    init(seed: UInt64, connection: Connection) {
        self.seed = seed
        generator = SeededGenerator(seed: seed)
        self.connection = connection
    }

    /// "holding NET ID:COMPLETED:TOTAL:LABEL ...", activities sorted by id.
    var holding: String {
        let entries = live.sorted { $0.key < $1.key }.map { id, activity in
            "\(id):\(activity.completed):\(activity.total):\(activity.label)"
        }
        return (["holding", "\(net)"] + entries).joined(separator: " ")
    }

    mutating func run(operations: Int, stoppingAt stop: Int?) {
        for index in 0..<operations {
            if index == stop {
                burst()
                return
            }
            step()
        }
    }

    // MARK: - One call

    private mutating func step() {
        let roll = generator.next() % 100
        switch roll {
        case 0..<25:
            begin()
        case 25..<45:
            guard let id = ownID() else { return begin() }
            update(id)
        case 45..<62:
            guard let id = ownID() else { return push() }
            expect(call("EndActivity", [.uint32(id)]), "EndActivity \(id)")
            live[id] = nil
        case 62..<82:
            push()
        case 82..<97:
            switch call("Pop", []) {
            case .success: net -= 1
            case .failure(let error) where error.name.rawValue.hasSuffix(".NotActive"): break
            case .failure(let error): fail("Pop failed: \(error)", status: 1)
            }
        default:
            poke()
        }
    }

    private mutating func begin() {
        labels += 1
        let label = "r\(seed).\(labels)"
        switch call("BeginActivity", [.string(label)]) {
        case .success(let reply):
            guard let id = (try? reply.arguments())?.first?.uint32, id > highestID else {
                fail("BeginActivity gave no id above \(highestID)", status: 1)
            }
            highestID = id
            live[id] = (label, 0, 0)
        case .failure(let error) where error.name == .limitsExceeded:
            break
        case .failure(let error):
            fail("BeginActivity failed: \(error)", status: 1)
        }
    }

    private mutating func update(_ id: UInt32) {
        let total = generator.next() % 3 == 0 ? 0 : generator.next() % 1_000_000_000 + 1
        if total > 0, generator.next() % 8 == 0 {
            // completed > total: refused with InvalidArgs, nothing changes.
            switch call("UpdateActivity", [.uint32(id), .uint64(total + 1), .uint64(total)]) {
            case .failure(let error) where error.name == .invalidArgs: return
            case let result: fail("UpdateActivity with completed > total gave \(result)", status: 1)
            }
        }
        let completed = total == 0 ? generator.next() % 1_000_000 : generator.next() % (total + 1)
        expect(call("UpdateActivity", [.uint32(id), .uint64(completed), .uint64(total)]), "UpdateActivity \(id)")
        live[id]?.completed = completed
        live[id]?.total = total
    }

    private mutating func push() {
        expect(call("Push", []), "Push")
        net += 1
    }

    /// Update or End of an id this client does not hold: someone else's, ended, or never given.
    private mutating func poke() {
        let id = UInt32(truncatingIfNeeded: generator.next() % (UInt64(highestID) + 64))
        guard live[id] == nil else { return }
        let member: MemberName = generator.next() % 2 == 0 ? "EndActivity" : "UpdateActivity"
        let arguments: [Value] = member == "EndActivity" ? [.uint32(id)] : [.uint32(id), .uint64(1), .uint64(2)]
        switch call(member, arguments) {
        case .failure(let error)
        where error.name == .accessDenied || error.name.rawValue.hasSuffix(".UnknownActivity"):
            break
        case let result:
            fail("\(member) of id \(id), not ours, gave \(result)", status: 1)
        }
    }

    /// Activity calls sent without waiting for their replies, so the client is killed with
    /// calls in flight. No counter calls: their outcome would be unknown.
    private mutating func burst() {
        var calls: [Message] = []
        do {
            for number in 0..<8 {
                calls.append(try message("BeginActivity", [.string("burst \(seed).\(number)")]))
            }
            for id in live.keys.sorted() {
                calls.append(try message("UpdateActivity", [.uint32(id), .uint64(1), .uint64(1)]))
                if generator.next() % 2 == 0 { calls.append(try message("EndActivity", [.uint32(id)])) }
            }
            for call in calls { try connection.send(call) }
        } catch {
            fail("cannot send the burst: \(error)", status: 1)
        }
        connection.flush()
    }

    // MARK: - Calls

    private mutating func ownID() -> UInt32? {
        guard !live.isEmpty else { return nil }
        let ids = live.keys.sorted()
        return ids[Int(truncatingIfNeeded: generator.next() % UInt64(ids.count))]
    }

    private func message(_ member: MemberName, _ arguments: [Value]) throws(BusError) -> Message {
        try Message.methodCall(
            destination: service, path: object, interface: interface, member: member, arguments: arguments)
    }

    private func call(_ member: MemberName, _ arguments: [Value]) -> Result<Message, BusError> {
        do {
            return .success(try connection.call(try message(member, arguments), timeout: .seconds(60)))
        } catch {
            return .failure(error)
        }
    }

    private func expect(_ result: Result<Message, BusError>, _ what: String) {
        if case .failure(let error) = result { fail("\(what) failed: \(error)", status: 1) }
    }
}
