import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract

/// A subscriber that records every PropertiesChanged the service sends, on a thread of its own
/// so it keeps reading while the test floods the bus. Stops when released.
final class SignalRecorder: @unchecked Sendable {
    /// What the reading thread shares with the test; the thread holds only this, so releasing
    /// the recorder stops it.
    private final class Log: @unchecked Sendable {
        let condition = NSCondition()
        var signals: [[String: Value]] = []
        var stopping = false
        var finished = false
    }

    private let log = Log()

    /// Connects, subscribes, and starts recording.
    init(address: String) throws {
        let client = try ServiceProbe(address: address)
        try client.subscribe()
        let thread = Thread { [log] in Self.record(client, into: log) }
        thread.name = "signal recorder"
        thread.start()
    }

    deinit {
        stop()
    }

    /// Everything recorded so far, in arrival order.
    var recorded: [[String: Value]] {
        log.condition.withLock { log.signals }
    }

    /// The state the signals add up to: each signal's values applied in order.
    var merged: [String: Value] {
        recorded.reduce(into: [:]) { state, signal in state.merge(signal) { $1 } }
    }

    /// Stops reading; returns once the reading thread has ended.
    func stop() {
        log.condition.withLock {
            log.stopping = true
            while !log.finished { log.condition.wait() }
        }
    }

    private static func record(_ client: ServiceProbe, into log: Log) {
        while !log.condition.withLock({ log.stopping }) {
            // A short timeout only so `stop()` is noticed; messages end the wait at once.
            guard let message = client.connection.readMessage(timeout: .milliseconds(50)),
                let changed = serviceProperties(in: message)
            else { continue }
            log.condition.withLock { log.signals.append(changed) }
        }
        log.condition.withLock {
            log.finished = true
            log.condition.broadcast()
        }
    }
}

extension SignalRecorder {
    /// Signals after which a watcher holding every value announced so far would see a state
    /// that never existed: Active false with Count > 0, or Active true with Count 0.
    var impossibleSignals: [[String: Value]] {
        var active = false
        var count: UInt32 = 0
        return recorded.filter { signal in
            if let flag = signal["Active"]?.bool { active = flag }
            if let number = signal["Count"]?.uint32 { count = number }
            return signal["Active"] != nil && active != (count > 0)
        }
    }

    /// How many signals carried `Count` through its throttle, not with an `Active` change.
    var countSignals: Int {
        recorded.filter { $0["Count"] != nil && $0["Active"] == nil }.count
    }

    /// Waits until the merged state's `Count` is `count`, which the throttle guarantees by the
    /// end of its window after the last change.
    func waitForMergedCount(_ count: UInt32, timeout: Duration = .seconds(10)) throws {
        try waitUntil("the subscriber's last Count to be \(count)", timeout: timeout) {
            merged["Count"]?.uint32 == count
        }
    }
}
