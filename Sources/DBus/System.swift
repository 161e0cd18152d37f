#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
