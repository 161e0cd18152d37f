import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityModel
@testable import NetActivityService
import NetActivityTestSupport

/// netactivityd's `Service` run on a thread of the test's own process, on a private bus, with a
/// `ManualClock`: the test moves time, and the service's throttle, debounce and rate timers fire
/// on the clock's word, never on a real wait.
///
/// What is about the process (signals, exit status, replacement) stays with `ServiceDaemon`,
/// which runs the real binary.
final class InProcessService: @unchecked Sendable {
    let clock = ManualClock()
    let bus: PrivateBus
    private let finished = DispatchSemaphore(value: 0)
    // Run by a thread of its own; `stopRunning()` is the one call made from another thread.
    private let service: Service

    init(settings: IndicatorSettings = IndicatorSettings()) throws {
        bus = try PrivateBus()
        var options = ServiceOptions()
        options.bus = .address(bus.address)
        options.settings = settings
        let service = try Service(options: options, clock: clock)
        service.handlesTerminationSignals = false
        self.service = service
        let finished = finished
        // Handed to its thread, which alone touches it from here on (`stopRunning()` is safe
        // from any thread).
        nonisolated(unsafe) let running = service
        Thread {
            _ = running.run()
            finished.signal()
        }.start()
        let probe = try ServiceProbe(address: bus.address)
        try waitUntil("the in-process service to own its name") { (try? probe.ping()) != nil }
    }

    deinit {
        service.stopRunning()
        finished.wait()
    }

    /// A new blocking connection to the service's bus.
    func probe() throws -> ServiceProbe {
        try ServiceProbe(address: bus.address)
    }

    /// Moves the service's time forward; its loop wakes and fires what fell due.
    func advance(by duration: Duration) {
        clock.advance(by: duration)
    }

    /// Returns once the service has announced what fell due on its clock, with every message
    /// `client` has been sent up to then, in order.
    ///
    /// The loop fires due timers in the turn that dispatches the first ping, after its reply,
    /// so the second ping's reply follows whatever those timers sent.
    func settle(_ client: ServiceProbe) throws -> [Message] {
        try client.ping()
        try client.ping()
        var messages: [Message] = []
        while let message = client.nextMessage(timeout: .zero) { messages.append(message) }
        return messages
    }
}
