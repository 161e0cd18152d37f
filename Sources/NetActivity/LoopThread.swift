import DBus
import Foundation

/// An `EventLoop` running on a thread of its own, where the library does all its bus work so
/// that the app's threads never wait on the bus.
final class LoopThread: Sendable {
    let loop: EventLoop

    init() throws(BusError) {
        let loop = try EventLoop()
        self.loop = loop
        let thread = Thread { loop.run() }
        thread.name = "NetActivity bus"
        thread.start()
    }

    /// Runs `work` on the loop thread.
    func perform(_ work: @escaping @Sendable () -> Void) {
        loop.post(work)
    }

    /// Ends the thread after the work already posted.
    func finish() {
        loop.post { [loop] in loop.stop() }
    }
}
