#if canImport(Glibc)
import Glibc
#endif

/// Reads keys on a thread of its own, blocked in read(2) between them, and hands each to
/// `pressed`: the event loop has no way to watch a descriptor for input, and a blocked thread
/// costs no wake-up. The thread ends at the end of input; else it ends with the process.
enum KeyReader {
    static func start(reading descriptor: Int32, _ pressed: @escaping @Sendable (UInt8) -> Void) {
        let context = Unmanaged.passRetained(Reading(descriptor: descriptor, pressed: pressed)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Reading>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Reading>.fromOpaque(context).release()
        }
    }

    private final class Reading: Sendable {
        let descriptor: Int32
        let pressed: @Sendable (UInt8) -> Void

        init(descriptor: Int32, pressed: @escaping @Sendable (UInt8) -> Void) {
            self.descriptor = descriptor
            self.pressed = pressed
        }

        func run() {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN {
                    // Someone made the terminal non-blocking: wait for input rather than spin.
                    var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                }
                guard count > 0 else { return }
                for key in buffer[..<count] { pressed(key) }
            }
        }
    }
}
