import DBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An `EventLoop` running on a thread of its own, where the library does all its bus work so
/// that the app's threads never wait on the bus.
///
/// A plain POSIX thread: the core library links nothing from Foundation.
final class LoopThread: Sendable {
    let loop: EventLoop
    private let thread: pthread_t

    init() throws(BusError) {
        let loop = try EventLoop()
        self.loop = loop
        let context = Unmanaged.passRetained(loop).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let loop = Unmanaged<EventLoop>.fromOpaque(context).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard started == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            throw BusError(.noMemory, "cannot start the library's bus thread (error \(started))")
        }
        pthread_detach(thread)
        self.thread = thread
    }

    /// Whether the caller runs on this loop's thread.
    var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Runs `work` on the loop thread.
    func perform(_ work: @escaping @Sendable () -> Void) {
        loop.post(work)
    }

    /// Ends the thread after the work already posted.
    func finish() {
        loop.post { [loop] in loop.stop() }
    }
}
