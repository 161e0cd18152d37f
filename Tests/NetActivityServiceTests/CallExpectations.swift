import BusTestSupport
import DBus
import Foundation
import NetActivityService
import Testing

// Helpers shared by the method, property, error, introspection and foreign-client tests.

// MARK: - Error replies

/// Expects `body` to fail with the D-Bus error `name` carrying a non-empty message (docs/interface.md:
/// "Every error carries a human-readable message"), and returns that error.
@discardableResult
func expectCallFails(
    with name: ErrorName, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any
) -> BusError? {
    expectCallFails(withOneOf: [name], sourceLocation: sourceLocation, body)
}

/// Expects `body` to fail with one of the D-Bus errors `names` carrying a non-empty message.
@discardableResult
func expectCallFails(
    withOneOf names: Set<ErrorName>, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Any
) -> BusError? {
    let expected = names.map(\.rawValue).sorted().joined(separator: " or ")
    do {
        let result = try body()
        Issue.record("expected \(expected), but the call succeeded with \(result)", sourceLocation: sourceLocation)
        return nil
    } catch let error as BusError {
        #expect(names.contains(error.name), "expected \(expected), got \(error)", sourceLocation: sourceLocation)
        #expect(
            !error.message.trimmingCharacters(in: .whitespaces).isEmpty,
            "\(error.name) carries no message", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(expected), got a non-bus error: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

// MARK: - Reading the service's state

/// One entry of the `Activities` property, `(ussttt)`.
struct ListedActivity: Equatable, CustomStringConvertible {
    var id: UInt32
    var owner: String
    var label: String
    var completed: UInt64
    var total: UInt64
    /// Microseconds since the Unix epoch.
    var started: UInt64

    var description: String { "(\(id), \(owner), \(label.debugDescription), \(completed)/\(total), \(started))" }
}

/// Everything a client can observe of the indicator, for "state unchanged" checks.
struct ObservedState: Equatable {
    var active: Bool
    var count: UInt32
    var progress: Double
    var activities: [ListedActivity]
}

extension TestClient {
    /// Reads `Activities` and checks it is an `a(ussttt)`.
    func listedActivities() throws -> [ListedActivity] {
        let value = try property("Activities")
        guard value.signature == "a(ussttt)", let elements = value.elements else {
            throw BusTestError("Activities has type '\(value.signature)', expected 'a(ussttt)': \(value)")
        }
        return try elements.map { element in
            guard let fields = element.fields, fields.count == 6,
                let id = fields[0].uint32, case .string(let owner) = fields[1], case .string(let label) = fields[2],
                let completed = fields[3].uint64, let total = fields[4].uint64, let started = fields[5].uint64
            else { throw BusTestError("malformed entry in Activities: \(element)") }
            return ListedActivity(
                id: id, owner: owner, label: label, completed: completed, total: total, started: started)
        }
    }

    /// Reads a `b` property.
    func boolProperty(_ name: String) throws -> Bool {
        guard let value = try property(name).bool else { throw BusTestError("\(name) is not a b") }
        return value
    }

    /// Reads `Progress`, a `d`.
    func progress() throws -> Double {
        guard let value = try property("Progress").double else { throw BusTestError("Progress is not a d") }
        return value
    }

    /// Active, Count, Progress and Activities, read now.
    func observedState() throws -> ObservedState {
        ObservedState(
            active: try boolProperty("Active"), count: try count(), progress: try progress(),
            activities: try listedActivities())
    }

    /// Sends `count` identical calls before reading any reply, in batches that stay under the
    /// bus's limit on pending replies per connection, and returns the replies in sending order.
    func pipelined(_ member: MemberName, _ arguments: [Value] = [], count: Int, batch: Int = 4_096) throws -> [Message] {
        var replies: [Message] = []
        replies.reserveCapacity(count)
        var remaining = count
        while remaining > 0 {
            let size = min(batch, remaining)
            var waiting: [UInt32: Int] = [:]
            for index in 0..<size {
                waiting[try send(member, arguments)] = index
            }
            connection.flush()
            var batchReplies = [Message?](repeating: nil, count: size)
            while !waiting.isEmpty {
                guard let message = nextMessage(timeout: .seconds(30)) else {
                    throw BusTestError("\(waiting.count) of \(size) \(member) replies did not arrive")
                }
                guard message.kind == .methodReturn || message.kind == .error,
                    let index = waiting.removeValue(forKey: message.replySerial)
                else { continue }
                batchReplies[index] = message
            }
            replies += batchReplies.compactMap { $0 }
            remaining -= size
        }
        return replies
    }

    /// The introspection XML of `path` on the service.
    func introspect(_ path: ObjectPath) throws -> String {
        guard let xml = try call("Introspect", interface: .introspectable, path: path).first?.string else {
            throw BusTestError("Introspect of \(path) returned no string")
        }
        return xml
    }
}

/// Microseconds since the Unix epoch, by the wall clock.
func wallMicroseconds() -> UInt64 {
    UInt64(Date().timeIntervalSince1970 * 1_000_000)
}
