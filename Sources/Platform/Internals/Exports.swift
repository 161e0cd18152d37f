#if canImport(Glibc)
import Glibc
#endif

// The C library's variables, and its functions that are no system call, as the public types
// need them: reached through here as its calls are.

/// The error number of the call that just failed; set by a wrapper that fails before it
/// reaches the kernel.
var system_errno: Int32 {
    get { errno }
    set { errno = newValue }
}

/// This process's environment, as a child is given it.
var system_environ: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>! {
    environ
}

@discardableResult
func system_strerror(_ number: Int32) -> UnsafeMutablePointer<CChar>! {
    strerror(number)
}

@discardableResult
func system_strdup(_ text: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>! {
    strdup(text)
}

func system_free(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}
