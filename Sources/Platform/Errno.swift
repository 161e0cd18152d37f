#if canImport(Glibc)
import Glibc
#endif

/// A system call's error number, as a value. The corresponding C variable is `errno`.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The error of the call that just failed.
    static var current: Errno { Errno(rawValue: system_errno) }

    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    public static let noSuchProcess = Errno(rawValue: ESRCH)

    /// The system's sentence for it: "No such file or directory".
    public var description: String { String(cString: system_strerror(rawValue)) }
}
