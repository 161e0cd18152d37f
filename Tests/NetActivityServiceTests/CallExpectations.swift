import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

// Helpers shared by the method, property, error, introspection and foreign-client tests.

// MARK: - Error replies

/// The service's bus error name for an error thrown by a call, or nil.
func errorName(of body: () throws -> Any) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as BusError {
        return error.name.rawValue
    } catch {
        return "\(error)"
    }
}

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

extension ServiceProbe {
    /// Reads `Activities`, checked to be an `a(ussttt)`, as the wire has it (no owner details).
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

    /// Active, Count, Progress and Activities, read now.
    func observedState() throws -> ObservedState {
        ObservedState(
            active: try boolProperty("Active"), count: try count(), progress: try progress(),
            activities: try listedActivities())
    }
}

/// Microseconds since the Unix epoch, by the wall clock.
func wallMicroseconds() -> UInt64 {
    UInt64(Date().timeIntervalSince1970 * 1_000_000)
}
