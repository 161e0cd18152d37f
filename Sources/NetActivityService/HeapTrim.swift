#if canImport(Glibc)
import Glibc
#endif

/// Hands the heap's free pages back to the kernel (glibc's `malloc_trim`).
///
/// An `Activities` signal for thousands of activities builds megabytes of short-lived values.
/// glibc keeps what they freed for later allocations, so after one burst the service's RSS
/// would stay at its peak for good; trimming after such signals brings it back to what the
/// live activities use. Does nothing where the C library has no `malloc_trim` (musl).
enum HeapTrim {
    /// Announcing at least this many activities (or going down from that many) trims after.
    static let threshold = 1_024

    private typealias MallocTrim = @convention(c) (Int) -> Int32

    // Looked up once: glibc has it, other C libraries may not.
    private static let mallocTrim: MallocTrim? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim").map { unsafeBitCast($0, to: MallocTrim.self) }
    }()

    /// Returns free heap memory to the system.
    static func trim() {
        _ = mallocTrim?(0)
    }
}
