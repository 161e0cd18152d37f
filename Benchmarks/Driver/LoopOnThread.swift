import DBus
#if canImport(Glibc)
import Glibc
#endif

/// An `EventLoop` run on a POSIX thread of its own, where the benchmark's stand-ins for other
/// programs (PackageKit, plasmashell's job server) answer while the driver measures.
final class LoopOnThread: @unchecked Sendable {
    let loop: EventLoop
    private var thread = pthread_t()

    /// Takes `name` for the stand-in on `connection`, attached to `loop`, then runs the loop.
    ///
    /// - Throws: `BenchError` naming `standIn` when the name is taken or the bus refuses.
    convenience init(_ loop: EventLoop, owning name: BusName, on connection: Connection, for standIn: String) throws(BenchError) {
        do {
            guard try connection.requestName(name, options: [.doNotQueue]) == .primaryOwner else {
                throw BenchError("the \(standIn) stand-in could not own \(name)")
            }
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("the \(standIn) stand-in: \(error)")
        }
        self.init(loop)
    }

    /// Starts running `loop`, with whatever is attached to it already.
    init(_ loop: EventLoop) {
        self.loop = loop
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { box in
            let running = Unmanaged<LoopOnThread>.fromOpaque(box!).takeRetainedValue()
            running.loop.run()
            return nil
        }, box)
    }

    /// Stops the loop and waits for its thread.
    func stop() {
        loop.post { [loop] in loop.stop() }
        pthread_join(thread, nil)
    }
}
