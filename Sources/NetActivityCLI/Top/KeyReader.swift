import DBus
import Platform

/// Hands each key read from `descriptor` to `pressed`, on the event loop, which watches the
/// descriptor for input: no thread of its own, and no wake-up between keys. Reading ends at
/// the end of input.
enum KeyReader {
    static func start(on loop: EventLoop, reading descriptor: Int32, _ pressed: @escaping (UInt8) -> Void) {
        let input = FileDescriptor(rawValue: descriptor)
        var buffer = [UInt8](repeating: 0, count: 64)
        loop.onReadable(descriptor) {
            let count: Int
            do {
                count = try input.read(into: &buffer)
            } catch {
                // Someone made the terminal non-blocking: wait for the next input.
                return (error as? Errno) == .wouldBlock
            }
            guard count > 0 else { return false }
            for key in buffer[..<count] { pressed(key) }
            return true
        }
    }
}
