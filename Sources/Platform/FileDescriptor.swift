#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor this process owns. A value, as the kernel's number is: whoever opens
/// one closes it (`close()`), usually in a `defer`.
public struct FileDescriptor: Equatable, Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Opens `path` for reading, closed on exec. The corresponding C function is `open`.
    public static func open(readOnly path: String) throws(Errno) -> FileDescriptor {
        let descriptor = system_open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .current }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Opens `path` with the C flags `flags` (and `O_CLOEXEC`), creating it with `mode`.
    public static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
        let descriptor = system_open(path, flags | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw .current }
        return FileDescriptor(rawValue: descriptor)
    }

    /// Reads what is there, up to `buffer.count` bytes; 0 at the end. The corresponding C
    /// function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = system_read(rawValue, base, buffer.count)
        guard count >= 0 else { throw .current }
        return count
    }

    /// Reads what is there into `buffer`, up to its size; 0 at the end.
    public func read(into buffer: inout [UInt8]) throws(Errno) -> Int {
        let count = buffer.withUnsafeMutableBytes { bytes in system_read(rawValue, bytes.baseAddress, bytes.count) }
        guard count >= 0 else { throw .current }
        return count
    }

    /// Reads to the end, or `limit` bytes. Files in `/proc` say nothing of their size, so the
    /// buffer starts small and doubles as they fill it: a file read every few seconds costs
    /// what it holds, not `limit`.
    public func readAll(limit: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(limit, 8_192))
        var filled = 0
        while filled < limit {
            if filled == bytes.count { bytes += [UInt8](repeating: 0, count: min(bytes.count, limit - bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                system_read(rawValue, buffer.baseAddress! + filled, buffer.count - filled)
            }
            guard count >= 0 else { throw .current }
            guard count > 0 else { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Writes all of `bytes`, however many calls it takes. The corresponding C function is
    /// `write`.
    public func write(_ bytes: [UInt8]) throws(Errno) {
        if let failure = bytes.withUnsafeBytes({ writeAll($0) }) { throw failure }
    }

    /// Writes all of `text`'s UTF-8, from the string's own storage.
    public func write(_ text: String) throws(Errno) {
        var text = text
        if let failure = text.withUTF8({ writeAll(UnsafeRawBufferPointer($0)) }) { throw failure }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Errno? {
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let count = system_write(rawValue, base + offset, bytes.count - offset)
            guard count >= 0 else { return .current }
            offset += count
        }
        return nil
    }

    /// Closes it; not retried on EINTR, since Linux frees the number either way.
    public func close() {
        system_close(rawValue)
    }
}

extension FileDescriptor {
    /// Makes `target` another name for this descriptor, closing what `target` was. The
    /// corresponding C function is `dup2`.
    public func duplicate(as target: FileDescriptor) throws(Errno) {
        guard system_dup2(rawValue, target.rawValue) >= 0 else { throw .current }
    }

    /// Sleeps until at least one of `descriptors` is readable, has hung up or failed, and says
    /// which, in their order. The corresponding C function is `poll`.
    public static func waitForInput(_ descriptors: [FileDescriptor]) throws(Errno) -> [Bool] {
        var polled = descriptors.map { pollfd(fd: $0.rawValue, events: Int16(POLLIN), revents: 0) }
        guard system_poll(&polled, nfds_t(polled.count), -1) >= 0 else { throw .current }
        return polled.map { $0.revents != 0 }
    }

    /// A descriptor that becomes readable when process `pid` exits (Linux 5.3 and later). glibc
    /// has `pidfd_open` from 2.36 only and Swift cannot call the variadic `syscall`, so it is
    /// looked up when needed: a build runs on an older glibc too, and fails there with ENOSYS.
    public static func watching(process pid: Int32) throws(Errno) -> FileDescriptor {
        let descriptor = system_pidfd_open(pid, 0)
        guard descriptor >= 0 else { throw .current }
        return FileDescriptor(rawValue: descriptor)
    }
}
