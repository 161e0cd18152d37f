import Synchronization

/// Follows a client's states until cancelled: what `NetActivityClient.observe(_:)` returns.
///
/// Cancelled by `cancel()` or when released. Once `cancel()` returns, the handler is not called
/// again (a call already under way on the client's thread may still finish). Safe from any
/// thread.
public final class Observation: Sendable {
    private let gate: ObservationGate
    private let stop: @Sendable () -> Void

    init(gate: ObservationGate, stop: @escaping @Sendable () -> Void) {
        self.gate = gate
        self.stop = stop
    }

    deinit {
        cancel()
    }

    /// Stops the handler; harmless if already cancelled.
    public func cancel() {
        guard gate.close() else { return }
        stop()
    }
}

/// Whether an observation still wants states: checked on the client's thread before every call
/// of the handler, so a cancel from another thread takes effect at once rather than when the
/// client's thread gets to the removal.
final class ObservationGate: Sendable {
    private let open = Atomic<Bool>(true)

    var isOpen: Bool { open.load(ordering: .acquiring) }

    /// Closes the gate; returns whether this call closed it.
    func close() -> Bool {
        open.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
    }
}

/// One follower of the session's states, on the session's thread: `deliver` gets every new
/// state, `finish` is called once if the session closes first.
struct StateObserver: Sendable {
    var deliver: @Sendable (IndicatorSnapshot) -> Void
    var finish: @Sendable () -> Void
}
