import Platform
#if canImport(Glibc)
import Glibc
#endif

/// Writes whole lines straight to a descriptor: nothing sits in a buffer while a panel waits
/// on the other end of a pipe.
enum Output {
    static func line(_ text: String) {
        write(text + "\n", to: 1)
    }

    static func error(_ text: String) {
        write("netactivity: " + text + "\n", to: 2)
    }

    /// Returns false when the reader has gone away (EPIPE).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        (try? FileDescriptor(rawValue: descriptor).write(text)) != nil
    }
}
