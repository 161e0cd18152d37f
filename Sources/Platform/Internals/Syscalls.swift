#if canImport(Glibc)
import Glibc
#endif

// The C library's calls on descriptors, files, sockets, clocks and terminals, one wrapper each,
// named after the call: the public types call these and never the C library, so every raw call
// is in this folder (RepositoryTests' PlatformCallTests finds any made elsewhere in the layer).
// A wrapper whose call a signal can interrupt retries it, so no caller has to remember to; the
// others are the call itself. Each result may be ignored, as the C call's may.

/// Every raw call of the platform layer that a signal can interrupt goes through here: EINTR is
/// retried, in this one place, until the call gives another answer; any other failure comes
/// back as its `Errno`.
@inline(__always)
func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || system_errno != EINTR { return result }
    }
}

// MARK: - Descriptors

@discardableResult
func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
    retryingInterrupts { open(path, flags) }
}

@discardableResult
func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    retryingInterrupts { open(path, flags, mode) }
}

@discardableResult
func system_read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    retryingInterrupts { read(descriptor, buffer, count) }
}

@discardableResult
func system_write(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    retryingInterrupts { write(descriptor, buffer, count) }
}

/// Not retried on EINTR: Linux frees the number either way, and a second close could close a
/// descriptor another thread has just been given.
@discardableResult
func system_close(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

@discardableResult
func system_dup2(_ descriptor: Int32, _ target: Int32) -> Int32 {
    retryingInterrupts { dup2(descriptor, target) }
}

@discardableResult
func system_poll(_ descriptors: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 {
    retryingInterrupts { poll(descriptors, count, timeout) }
}

private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32

/// glibc's `pidfd_open`, looked up at run time (once) for the reason
/// `FileDescriptor.watching(process:)` gives.
private let pidfdOpenFunction: PidfdOpen? =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open").map { unsafeBitCast($0, to: PidfdOpen.self) }

/// Where glibc lacks `pidfd_open`, fails as the kernel would without it, with ENOSYS.
@discardableResult
func system_pidfd_open(_ pid: pid_t, _ flags: UInt32) -> Int32 {
    guard let pidfdOpen = pidfdOpenFunction else {
        system_errno = ENOSYS
        return -1
    }
    return pidfdOpen(pid, flags)
}

// MARK: - Directories and paths

@discardableResult
func system_opendir(_ path: UnsafePointer<CChar>) -> OpaquePointer? {
    opendir(path)
}

@discardableResult
func system_readdir(_ stream: OpaquePointer) -> UnsafeMutablePointer<dirent>? {
    readdir(stream)
}

@discardableResult
func system_closedir(_ stream: OpaquePointer) -> Int32 {
    closedir(stream)
}

/// A `dirent`'s name, decoded once for every caller.
func name(of entry: UnsafeMutablePointer<dirent>) -> String {
    withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}

@discardableResult
func system_readlink(_ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
    readlink(path, buffer, size)
}

@discardableResult
func system_stat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> Int32 {
    stat(path, status)
}

@discardableResult
func system_access(_ path: UnsafePointer<CChar>, _ mode: Int32) -> Int32 {
    access(path, mode)
}

// MARK: - Sockets

@discardableResult
func system_socket(_ domain: Int32, _ type: Int32, _ protocolNumber: Int32) -> Int32 {
    socket(domain, type, protocolNumber)
}

@discardableResult
func system_bind(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(descriptor, address, length)
}

@discardableResult
func system_setsockopt(
    _ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: UnsafeRawPointer, _ length: socklen_t
) -> Int32 {
    setsockopt(descriptor, level, option, value, length)
}

@discardableResult
func system_send(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    retryingInterrupts { send(descriptor, buffer, count, flags) }
}

@discardableResult
func system_recv(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    retryingInterrupts { recv(descriptor, buffer, count, flags) }
}

// MARK: - Clocks

@discardableResult
func system_clock_gettime(_ clock: clockid_t, _ time: UnsafeMutablePointer<timespec>) -> Int32 {
    clock_gettime(clock, time)
}

// MARK: - Terminals

@discardableResult
func system_isatty(_ descriptor: Int32) -> Int32 {
    isatty(descriptor)
}

@discardableResult
func system_ioctl(_ descriptor: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
    ioctl(descriptor, request, argument)
}

@discardableResult
func system_tcgetattr(_ descriptor: Int32, _ settings: UnsafeMutablePointer<termios>) -> Int32 {
    tcgetattr(descriptor, settings)
}

@discardableResult
func system_tcsetattr(_ descriptor: Int32, _ when: Int32, _ settings: UnsafePointer<termios>) -> Int32 {
    tcsetattr(descriptor, when, settings)
}
