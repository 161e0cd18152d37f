#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Closes a descriptor this process owns.
func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// CLOCK_MONOTONIC in nanoseconds: the time base of event-loop timers.
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

extension String {
    /// Whether the UTF-8 form holds a NUL byte, which C would take for the end.
    var containsNUL: Bool {
        var copy = self
        return copy.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }
}
