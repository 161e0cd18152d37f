import Platform
import BusTestSupport
import DBus
import Foundation

/// Values appended from any thread and read from any other.
final class Log<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

/// A clock for a loop's timers that moves only when the test moves it, waking the loop.
final class HandClock: TimeSource, Sendable {
    private struct State {
        var nanoseconds: UInt64 = 1_000_000_000
        var observers: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    var monotonicNanoseconds: UInt64 { state.withLock { $0.nanoseconds } }
    var wallMicroseconds: UInt64 { 1_700_000_000_000_000 + monotonicNanoseconds / 1_000 }
    var movesByItself: Bool { false }

    func onAdvance(_ moved: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(moved) }
    }

    func advance(by duration: Duration) {
        let observers = state.withLock { state in
            state.nanoseconds += UInt64(duration.components.seconds) * 1_000_000_000
                + UInt64(duration.components.attoseconds / 1_000_000_000)
            return state.observers
        }
        for moved in observers { moved() }
    }
}
