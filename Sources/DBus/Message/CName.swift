#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A name kept NUL-terminated, to compare with a C string from a message header as it is:
/// the object server matches a call's path, interface and member without making a `String`
/// of any of them.
struct CName {
    private let bytes: ContiguousArray<CChar>

    init(_ text: String) { bytes = text.utf8CString }
    init(_ raw: UnsafePointer<CChar>) { bytes = ContiguousArray(UnsafeBufferPointer(start: raw, count: strlen(raw) + 1)) }

    /// Whether `raw` spells the same name; a nil `raw` counts as the empty string.
    func matches(_ raw: UnsafePointer<CChar>?) -> Bool {
        guard let raw else { return bytes.count == 1 }
        return bytes.withUnsafeBufferPointer { strcmp($0.baseAddress!, raw) == 0 }
    }
}
