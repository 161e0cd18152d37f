#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's POSIX signal handlers, which belong to the process and not to any one loop.
///
/// Each signal number is routed to one descriptor at a time, the wake-up pipe of the
/// `EventLoop` that last asked for it with `onSignal`; the handler writes the signal's number
/// there, one async-signal-safe write(2). Different loops may take different signals.
enum ProcessSignals {
    /// Routes `signo` to `descriptor`, taking it from whichever loop had it.
    static func route(_ signo: Int32, to descriptor: Int32) {
        precondition(1...maximum ~= signo, "signal number \(signo) out of range")
        // Set before the handler goes in, so the handler never sees a stale descriptor.
        routes[Int(signo)] = descriptor
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = signalHandler
        sigemptyset(&handler.sa_mask)
        handler.sa_flags = SA_RESTART
        sigaction(signo, &handler, nil)
    }

    /// Gives `signo` back to its default action if it is still routed to `descriptor`.
    static func release(_ signo: Int32, from descriptor: Int32) {
        guard 1...maximum ~= signo, routes[Int(signo)] == descriptor else { return }
        // Default action first: a signal arriving in between is never written to a closed pipe.
        signal(signo, SIG_DFL)
        routes[Int(signo)] = -1
    }

    /// Signal numbers travel as one byte, and Linux has 64.
    private static let maximum: Int32 = 64
}

/// The descriptor each signal number is written to, -1 for none. Raw memory allocated once,
/// before any handler is installed: the handler may read it but not run Swift's lazy
/// initialisation or touch reference counts, neither of which is async-signal-safe.
nonisolated(unsafe) private let routes: UnsafeMutablePointer<Int32> = {
    let routes = UnsafeMutablePointer<Int32>.allocate(capacity: 65)
    routes.initialize(repeating: -1, count: 65)
    return routes
}()

private let signalHandler: @convention(c) (Int32) -> Void = { signo in
    guard signo >= 1, signo <= 64 else { return }
    let descriptor = routes[Int(signo)]
    guard descriptor >= 0 else { return }
    var byte = UInt8(truncatingIfNeeded: signo)
    _ = write(descriptor, &byte, 1)
}
