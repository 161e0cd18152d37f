#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp (mode 0700), for a test's files; the test removes it.
public func temporaryDirectory() throws -> String {
    var template = Array("/tmp/netactivity-test-XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.flatMap(mkdtemp).map { String(cString: $0) }
    }
    guard let created else { throw BusTestError("mkdtemp failed") }
    return created
}
