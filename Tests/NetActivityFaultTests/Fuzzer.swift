import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

/// Sends calls, checks each reply against `ReferenceService`, and applies it to the model.
struct Fuzzer {
    var clients: [ServiceProbe]
    var model = ReferenceService()
    var calls: FuzzCalls
    private(set) var mismatches: [String] = []
    /// Calls to org.freedesktop.DBus.Peer that libdbus answered itself, against the contract.
    private(set) var peerDeviations: [String] = []
    private(set) var errorNames: [ErrorName: Int] = [:]
    private(set) var sent = 0
    private(set) var skipped = 0

    init(seed: UInt64, clients: [ServiceProbe]) {
        self.clients = clients
        calls = FuzzCalls(seed: seed)
    }

    /// Random batches of 1 to 64 pipelined calls from a random client.
    mutating func runRandom(calls count: Int) throws {
        while sent < count {
            let client = clients[Int(calls.random.next() % UInt64(clients.count))]
            let size = 1 + Int(calls.random.next() % 64)
            var batch: [Message] = []
            for _ in 0..<size {
                if let call = calls.call(model: &model, sender: client.uniqueName) {
                    batch.append(call)
                } else {
                    skipped += 1
                }
            }
            try run(client, batch)
        }
    }

    /// One client begins activities past the per-connection limit (1,024), then ends them.
    mutating func fillToTheOwnerLimit() throws {
        let client = clients[0]
        let room = ReferenceService.maximumActivitiesPerOwner - model.activityCount(owner: client.uniqueName)
        try run(client, (0..<room + 5).map { try ServiceProbe.methodCall("BeginActivity", [.string("filler \($0)")]) })
        #expect(model.activityCount(owner: client.uniqueName) == ReferenceService.maximumActivitiesPerOwner)
        let ids = model.live.filter { $0.value.owner == client.uniqueName }.keys.sorted()
        try run(client, try ids.map { try ServiceProbe.methodCall("EndActivity", [.uint32($0)]) })
    }

    /// Pushes past the shared counter's cap (65,536), then pops back to where it was.
    mutating func fillTheSharedCounter() throws {
        let start = model.sharedCount
        let room = Int(ReferenceService.maximumSharedCount - start)
        try run(clients[1], (0..<room + 3).map { _ in try ServiceProbe.methodCall("Push") })
        #expect(model.sharedCount == ReferenceService.maximumSharedCount)
        try run(clients[2], (0..<room).map { _ in try ServiceProbe.methodCall("Pop") })
        #expect(model.sharedCount == start)
    }

    /// Peer calls with arguments, on paths with no object, and with unknown members: docs/interface.md
    /// wants InvalidArgs, UnknownObject and UnknownMethod.
    mutating func abusePeer() throws {
        try run(clients[2], [
            try ServiceProbe.methodCall("Ping", [.string("argument")], interface: .peer),
            try ServiceProbe.methodCall("GetMachineId", [.uint32(1)], interface: .peer),
            try ServiceProbe.methodCall("Ping", interface: .peer, path: "/no/such/object"),
            try ServiceProbe.methodCall("Pong", interface: .peer, path: "/no/such/object"),
        ])
    }

    /// Labels past the limit up to the largest message D-Bus carries (128 MiB), each refused
    /// with InvalidArgs; and an empty label, accepted.
    mutating func sendHugeLabels() throws {
        // The protocol's maximum message length, less room for the header the bus completes.
        let largest = 134_217_728 - 1_024
        for bytes in [0, 257, 4_096, 65_536, 1 << 20, 16 << 20, largest] {
            let label = String(repeating: "x", count: bytes)
            try run(
                clients[1], [try ServiceProbe.methodCall("BeginActivity", [.string(label)])], timeout: .seconds(120))
        }
    }

    // MARK: - Checking

    /// Pipelines `batch` from `client`, then checks every reply in order against the model.
    mutating func run(_ client: ServiceProbe, _ batch: [Message], timeout: Duration = .seconds(60)) throws {
        guard !batch.isEmpty else { return }
        let replies = try client.pipeline(batch, timeout: timeout)
        sent += batch.count
        for (call, reply) in zip(batch, replies) {
            let expected = model.outcome(of: call, sender: client.uniqueName)
            if let problem = Self.problem(with: reply, expected: expected, model: model) {
                if let peer = ReferenceService.libdbusPeerOutcome(of: call),
                    Self.problem(with: reply, expected: peer, model: model) == nil
                {
                    peerDeviations.append("\(Self.describe(call)): expected \(expected), got \(problem)")
                } else {
                    mismatches.append(
                        "\(Self.describe(call)) from \(client.uniqueName): expected \(expected), got \(problem)")
                }
            }
            if let name = reply.errorName { errorNames[name, default: 0] += 1 }
            model.apply(call, sender: client.uniqueName, reply: reply)
        }
    }

    /// Nil when `reply` is what the contract requires, else what was wrong.
    private static func problem(
        with reply: Message, expected: ReferenceService.Outcome, model: ReferenceService
    ) -> String? {
        if reply.kind == .error {
            let error = reply.error ?? BusError(.failed, "")
            guard ReferenceService.contractErrors.contains(error.name) else {
                return "an error outside the contract: \(error)"
            }
            guard !error.message.isEmpty else { return "an error without a message: \(error.name)" }
            guard case .error(let names) = expected else { return "\(error)" }
            return names.contains(error.name) ? nil : "\(error)"
        }
        guard case .reply(let check) = expected else { return "a reply with \((try? reply.arguments()) ?? [])" }
        let arguments = (try? reply.arguments()) ?? []
        switch check {
        case .empty:
            return arguments.isEmpty ? nil : "arguments \(arguments)"
        case .newActivityID:
            guard arguments.count == 1, let id = arguments[0].uint32, id > model.highestID else {
                return "\(arguments) instead of an id above \(model.highestID)"
            }
            return nil
        case .property(let name, let value):
            guard arguments.count == 1, reply.signature == "v", let actual = arguments[0].unwrapped,
                sameProperty(name, actual, value)
            else { return "\(arguments)" }
            return nil
        case .properties(let all):
            guard arguments.count == 1, reply.signature == "a{sv}",
                let entries = arguments[0].stringKeyedEntries, Set(entries.keys) == Set(all.keys),
                all.allSatisfy({ name, value in
                    entries[name]?.unwrapped.map { sameProperty(name, $0, value) } ?? false
                })
            else { return "\(arguments)" }
            return nil
        case .introspection(let text):
            guard arguments.count == 1, let xml = arguments[0].string, xml.contains(text),
                xml.hasSuffix("</node>\n")
            else { return "\(arguments)" }
            return nil
        case .machineID:
            guard arguments.count == 1, let id = arguments[0].string, id.count == 32,
                id.allSatisfy({ $0.isHexDigit })
            else { return "\(arguments)" }
            return nil
        }
    }

    /// Compares a property value with the model's: `Visible` follows timers and `started` is
    /// the service's clock, so neither is the model's to know.
    private static func sameProperty(_ name: String, _ actual: Value, _ expected: Value) -> Bool {
        switch name {
        case "Visible":
            return actual.bool != nil
        case "Rate":
            // Bytes over time on the service's clock: only its form is the model's to know.
            guard let rate = actual.double else { return false }
            return rate.isFinite && rate >= 0
        case "Progress":
            // The service keeps running sums; the model adds afresh, in another order.
            guard let rate = actual.double, let wanted = expected.double else { return false }
            return rate == wanted || abs(rate - wanted) <= 1e-9
        case "Activities":
            guard case .array("(ussttt)", let rows) = actual else { return false }
            let withoutStart = rows.map { row -> Value in
                guard var fields = row.fields, fields.count == 6 else { return row }
                fields[5] = .uint64(0)
                return .structure(fields)
            }
            return .array(element: "(ussttt)", withoutStart) == expected
        default:
            return actual == expected
        }
    }

    /// The service's Count and Activities against the model.
    func expectServiceState(_ probe: ServiceProbe, _ context: String) throws {
        #expect(try probe.count() == model.count, "\(context)")
        let actual = withoutStart(try probe.activities())
        let expected = model.activities.map { id, activity in
            ActivityInfo(
                id: id, owner: activity.owner, label: activity.label, completed: activity.completed,
                total: activity.total, started: 0)
        }
        #expect(actual == expected, "\(context): Activities has \(actual.count) rows, expected \(expected.count)")
    }

    private static func describe(_ call: Message) -> String {
        let body = ((try? call.arguments()) ?? []).map { argument -> String in
            if case .string(let text) = argument, text.utf8.count > 80 { return "a string of \(text.utf8.count) bytes" }
            let text = "\(argument)"
            return text.count > 80 ? String(text.prefix(80)) + "…" : text
        }
        let interface = call.interface?.rawValue ?? "<no interface>"
        let member = call.member?.rawValue ?? "?"
        return "\(interface).\(member) at \(call.path?.rawValue ?? "?") '\(call.signature)' \(body)"
    }
}

extension ReferenceService {
    /// The error names docs/interface.md lists, plus UnknownObject for paths with no object (which
    /// the contract does not cover).
    static let contractErrors: Set<ErrorName> = [
        .notActive, .unknownActivity, .invalidArgs, .accessDenied, .limitsExceeded, .unknownMethod,
        .unknownInterface, .unknownProperty, .propertyReadOnly, .unknownObject,
    ]
}
