import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Everything a child writes to one pipe, read to EOF on a thread of its own so the child
/// never blocks on a full pipe and a test can wait for output with a deadline.
///
/// The thread holds this buffer, not the `ChildProcess`, so the process object can be released
/// while a grandchild still holds the pipe open; the thread ends at EOF.
final class OutputBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    /// How much of `bytes` `readLine` has handed out.
    private var consumed = 0
    private var finished = false

    /// Starts reading `descriptor`, which the buffer owns and closes at EOF.
    init(reading descriptor: Int32, name: String) {
        let thread = Thread { [self] in
            drain(descriptor)
        }
        thread.name = name
        thread.start()
    }

    /// All output so far, decoded as UTF-8.
    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The next line not yet returned, without its newline; the unterminated tail at EOF; then
    /// nil. Returns nil if `deadline` passes with no complete line (the caller decides whether
    /// that is a failure); `atEOF` tells the two nils apart.
    func nextLine(before deadline: Date) -> (line: String?, atEOF: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = bytes[consumed...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: bytes[consumed..<newline], as: UTF8.self)
                consumed = newline + 1
                return (line, false)
            }
            if finished {
                guard consumed < bytes.count else { return (nil, true) }
                let tail = String(decoding: bytes[consumed...], as: UTF8.self)
                consumed = bytes.count
                return (tail, false)
            }
            if Date() >= deadline {
                return (nil, false)
            }
            _ = condition.wait(until: deadline)
        }
    }

    /// Waits until the writer side is closed everywhere; false if `deadline` passed first.
    func waitForEOF(before deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) {
                return finished
            }
        }
        return true
    }

    private func drain(_ descriptor: Int32) {
        let capacity = 64 * 1024
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        defer {
            chunk.deallocate()
            _ = close(descriptor)
        }
        while true {
            let count = read(descriptor, chunk.baseAddress, capacity)
            if count < 0 && errno == EINTR {
                continue
            }
            condition.lock()
            if count > 0 {
                bytes.append(contentsOf: chunk.prefix(count))
            } else {
                finished = true
            }
            condition.broadcast()
            condition.unlock()
            if count <= 0 {
                return
            }
        }
    }
}
