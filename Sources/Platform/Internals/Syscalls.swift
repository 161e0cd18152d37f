#if canImport(Glibc)
import Glibc
#endif

/// Every raw call of the platform layer that a signal can interrupt goes through here: EINTR is
/// retried once, in one place, and any other failure comes back as its `Errno`.
@inline(__always)
func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}

/// A `dirent`'s name, decoded once for every caller.
func name(of entry: UnsafeMutablePointer<dirent>) -> String {
    withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}
