import BusTestSupport
import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for the download tests.
///
/// Listens on an ephemeral loopback port (never another interface), accepts at most
/// `connections` connections on a background thread, and hands each to `respond` on a thread
/// of its own with the request head already read. It stops accepting after `connections`, after
/// `lifetime`, or when released, so a test that goes wrong cannot leave it running.
final class LoopbackHTTPServer: @unchecked Sendable {
    /// The port the kernel chose.
    let port: UInt16
    private let listener: Int32
    private let stopped = NSCondition()
    private var isStopped = false

    init(
        connections: Int = 1, lifetime: Duration = .seconds(20),
        respond: @escaping @Sendable (HTTPExchange) -> Void
    ) throws {
        let listening: LoopbackListener
        do {
            listening = try LoopbackListener(backlog: 8)
        } catch {
            throw BusTestError(error.description)
        }
        listener = listening.descriptor
        port = listening.port

        let deadline = ContinuousClock.now + lifetime
        let thread = Thread { [self] in
            serve(connections: connections, until: deadline, respond: respond)
        }
        thread.name = "http 127.0.0.1:\(port)"
        thread.start()
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// Stops accepting; connections being served finish on their own.
    func stop() {
        stopped.lock()
        isStopped = true
        stopped.unlock()
    }

    private var shouldStop: Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return isStopped
    }

    private func serve(
        connections: Int, until deadline: ContinuousClock.Instant, respond: @escaping @Sendable (HTTPExchange) -> Void
    ) {
        defer { close(listener) }
        var served = 0
        while served < connections, !shouldStop, ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            // Children spawned by other tests must not inherit the connection.
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            served += 1
            let exchange = HTTPExchange(descriptor: connection, deadline: deadline)
            let thread = Thread {
                defer { exchange.close() }
                guard exchange.readRequestHead() else { return }
                respond(exchange)
            }
            thread.name = "http connection \(connection)"
            thread.start()
        }
    }
}

/// One accepted connection: the request head, and ways to answer (or not).
final class HTTPExchange: @unchecked Sendable {
    private let descriptor: Int32
    private let deadline: ContinuousClock.Instant
    private var closed = false
    /// The request line and headers, as received.
    private(set) var requestHead = ""

    init(descriptor: Int32, deadline: ContinuousClock.Instant) {
        self.descriptor = descriptor
        self.deadline = deadline
    }

    /// The request line, e.g. `GET /file HTTP/1.1`.
    var requestLine: String {
        String(requestHead.split(separator: "\r\n", maxSplits: 1).first ?? "")
    }

    /// Reads up to the blank line that ends the request head; false if the client went away.
    /// Body bytes that came with the head are counted in `bodyPrefix`.
    func readRequestHead() -> Bool {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator = Array("\r\n\r\n".utf8)
        while true {
            if let end = bytes.endOfFirst(terminator) {
                requestHead = String(decoding: bytes[..<end], as: UTF8.self)
                bodyPrefix = bytes.count - end
                return true
            }
            guard waitReadable() else { return false }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            bytes += buffer[..<count]
        }
    }

    /// Request body bytes read together with the head.
    private(set) var bodyPrefix = 0

    /// Reads and discards a request body of `count` bytes (bytes read with the head count
    /// too); returns how many arrived before the client stopped sending.
    func readBody(count: Int) -> Int {
        var received = bodyPrefix
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while received < count, waitReadable() {
            let got = recv(descriptor, &buffer, buffer.count, 0)
            guard got > 0 else { break }
            received += got
        }
        return received
    }

    /// Sends a status line and headers (with `Content-Length` when given).
    func sendHead(status: String = "200 OK", contentLength: Int?, extraHeaders: [String] = []) {
        var head = "HTTP/1.1 \(status)\r\nContent-Type: application/octet-stream\r\n"
        if let contentLength { head += "Content-Length: \(contentLength)\r\n" }
        for header in extraHeaders { head += header + "\r\n" }
        send(Array((head + "\r\n").utf8))
    }

    /// Sends bytes; false once the client has gone. Never raises SIGPIPE.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            rest = rest.dropFirst(written)
        }
        return true
    }

    /// Sends `bytes` in pieces of `chunk` with `pause` between them: a slow server.
    @discardableResult
    func trickle(_ bytes: [UInt8], chunk: Int, pause: Duration) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            guard send(Array(bytes[offset..<end])) else { return false }
            offset = end
            if offset < bytes.count { Thread.sleep(forTimeInterval: pause / .seconds(1)) }
        }
        return true
    }

    /// Says nothing more until the client closes the connection (or the server's lifetime
    /// ends): a stalled server.
    func waitForClientToClose() {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while waitReadable() {
            if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return }
        }
    }

    /// Closes the connection (a server dropping it mid-body when called early).
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }

    private func waitReadable() -> Bool {
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 50) > 0 { return true }
        }
        return false
    }
}

/// A latch a server thread waits on (blocking, with a deadline) until the test opens it.
final class ThreadLatch: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until opened; false if `timeout` passed first.
    @discardableResult
    func wait(timeout: Duration = .seconds(10)) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout / .seconds(1))
        condition.lock()
        defer { condition.unlock() }
        while !isOpen {
            if !condition.wait(until: deadline) { return isOpen }
        }
        return true
    }
}

extension Array where Element: Equatable {
    /// The index just past the first occurrence of `pattern`.
    fileprivate func endOfFirst(_ pattern: [Element]) -> Int? {
        guard count >= pattern.count else { return nil }
        for start in 0...(count - pattern.count) where self[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start + pattern.count
        }
        return nil
    }
}

extension HTTPExchange {
    /// The value of request header `name` (case-insensitive), if present.
    func header(_ name: String) -> String? {
        for line in requestHead.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
