import DBus
import Platform

/// The `EventLoop` where the library does all its bus work: on a thread of its own, so that
/// the app's threads never wait on the bus, or, for a program of this package that runs one
/// loop for everything (`netactivity bridge`), that loop, so a report made on it reaches the
/// bus with no hand-off between threads.
///
/// A plain thread (`PlatformThread`): the core library links nothing from Foundation.
final class LoopThread: Sendable {
    let loop: EventLoop
    /// The thread started for the loop; nil when the loop is the app's.
    private let thread: PlatformThread?

    init() throws(BusError) {
        let loop = try EventLoop()
        self.loop = loop
        do {
            thread = try PlatformThread.detached { loop.run() }
        } catch {
            throw BusError(.noMemory, "cannot start the library's bus thread (\(error))")
        }
    }

    /// The app's own loop, which the app runs and stops.
    init(sharing loop: EventLoop) {
        self.loop = loop
        thread = nil
    }

    /// Whether the caller runs on this loop's thread.
    var isCurrent: Bool {
        guard let thread else { return loop.isCurrent }
        return thread.isCurrent
    }
    /// Runs `work` on the loop thread.
    func perform(_ work: @escaping @Sendable () -> Void) {
        loop.post(work)
    }

    /// Ends the thread after the work already posted; an app's own loop is the app's to stop.
    func finish() {
        guard thread != nil else { return }
        loop.post { [loop] in loop.stop() }
    }
}
