import BusTestSupport
import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 (never another interface) that serves files as downloads
/// (`Content-Disposition: attachment`) only as far as the test lets it: each file trickles the
/// bytes its valve allows and waits for more. A file served without `Content-Length` ends by
/// closing the connection (HTTP/1.0), so its size is unknown to the browser until then.
///
/// `/all.html` is a page that downloads every file at once, one frame each (headless Chromium
/// opens one URL only); `/paced.html?every=SECONDS` one that keeps downloading. Any other path gets 404. Stops accepting when released; a connection being served ends
/// when its file is sent, when the client goes, or when the server is released.
public final class SlowFileServer: @unchecked Sendable {
    /// One file, its bytes let through as the test says.
    public final class File: @unchecked Sendable {
        public let name: String
        public let size: Int
        public let sendsLength: Bool
        private let condition = NSCondition()
        private var allowed = 0
        private var closed = false
        /// How many requests for it arrived.
        public private(set) var requests = 0

        public init(name: String, size: Int, sendsLength: Bool) {
            self.name = name
            self.size = size
            self.sendsLength = sendsLength
        }

        /// Lets the file's first `bytes` bytes through.
        public func allow(_ bytes: Int) {
            condition.lock()
            allowed = max(allowed, min(bytes, size))
            condition.broadcast()
            condition.unlock()
        }

        /// Lets the whole file through.
        public func finish() { allow(size) }

        fileprivate func requested() {
            condition.lock()
            requests += 1
            condition.unlock()
        }

        fileprivate func close() {
            condition.lock()
            closed = true
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until more than `sent` bytes are allowed; the new limit, or nil once closed.
        fileprivate func allowance(beyond sent: Int) -> Int? {
            condition.lock()
            defer { condition.unlock() }
            while allowed <= sent, !closed { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.2)) }
            return closed ? nil : allowed
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let files: [String: File]
    private let stopped = NSCondition()
    private var isStopped = false

    public init(_ files: [File]) throws {
        self.files = Dictionary(uniqueKeysWithValues: files.map { ("/" + $0.name, $0) })
        let listening: LoopbackListener
        do {
            listening = try LoopbackListener(backlog: 16)
        } catch {
            throw BusTestError(error.description)
        }
        listener = listening.descriptor
        port = listening.port
        let thread = Thread { [self] in serve() }
        thread.name = "slow files on 127.0.0.1:\(port)"
        thread.start()
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:<port>/<name>`.
    public func url(_ name: String) -> String {
        "http://127.0.0.1:\(port)/\(name)"
    }

    /// Stops accepting, and ends every file being served.
    public func stop() {
        stopped.lock()
        isStopped = true
        stopped.unlock()
        for file in files.values { file.close() }
    }

    private var shouldStop: Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return isStopped
    }

    private func serve() {
        defer { Glibc.close(listener) }
        while !shouldStop {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            // Children other tests spawn must not inherit the connection.
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            let thread = Thread { [self] in
                defer { Glibc.close(connection) }
                respond(on: connection)
            }
            thread.start()
        }
    }

    private func respond(on connection: Int32) {
        guard let path = readRequestPath(connection) else { return }
        if path == "/all.html" {
            let frames = files.values.map { "<iframe src=\"/\($0.name)\"></iframe>" }.sorted().joined()
            let page = "<!doctype html><title>downloads</title>" + frames
            send("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n" + page, on: connection)
            return
        }
        if path.hasPrefix("/paced.html?every="), let seconds = Int(path.dropFirst("/paced.html?every=".count)) {
            send(page(pacedEvery: seconds), on: connection)
            return
        }
        guard let file = files[path] else {
            send("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", on: connection)
            return
        }
        file.requested()
        // A body of unknown size ends when the connection closes, as HTTP/1.0 has it.
        var head = (file.sendsLength ? "HTTP/1.1" : "HTTP/1.0") + " 200 OK\r\nContent-Type: application/octet-stream\r\n"
        head += "Content-Disposition: attachment; filename=\"\(file.name)\"\r\nConnection: close\r\nCache-Control: no-store\r\n"
        if file.sendsLength { head += "Content-Length: \(file.size)\r\n" }
        guard send(head + "\r\n", on: connection) else { return }
        // What is let through trickles, 64 KiB every 100 ms, as from a slow link: Firefox counts
        // bytes from its progress notifications, which it spaces out, so a burst followed by
        // silence would be counted only in part until more came.
        let chunk = [UInt8](repeating: UInt8(ascii: "n"), count: 65_536)
        var sent = 0
        while sent < file.size, let allowed = file.allowance(beyond: sent) {
            while sent < allowed {
                let count = min(chunk.count, allowed - sent)
                guard send(chunk[..<count], on: connection) else { return }
                sent += count
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// `/paced.html?every=SECONDS`: a page that downloads every file not named `churn-…` at
    /// once, then the `churn-…` ones one at a time, SECONDS apart, in order of name, each
    /// frame removed a minute later: a browser that keeps downloading for as long as it runs.
    private func page(pacedEvery seconds: Int) -> String {
        let names = files.values.map(\.name).sorted()
        let now = names.filter { !$0.hasPrefix("churn-") }.map { "<iframe src=\"/\($0)\"></iframe>" }.joined()
        let later = names.filter { $0.hasPrefix("churn-") }.map { "\"/\($0)\"" }.joined(separator: ",")
        let page = """
            <!doctype html><title>downloads</title>\(now)<script>
            const later = [\(later)];
            setInterval(() => {
              const url = later.shift();
              if (!url) return;
              const frame = document.createElement("iframe");
              frame.src = url;
              document.body.appendChild(frame);
              setTimeout(() => frame.remove(), 60000);
            }, \(seconds * 1000));
            </script>
            """
        return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n" + page
    }

    /// The path of the request, once its head is read; nil if the client went first.
    private func readRequestPath(_ connection: Int32) -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n") {
            var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard !shouldStop else { return nil }
            guard poll(&entry, 1, 100) >= 0 else { return nil }
            guard entry.revents != 0 else { continue }
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            bytes += buffer[..<count]
        }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n").first ?? ""
        let words = line.split(separator: " ")
        return words.count >= 2 ? String(words[1]) : nil
    }

    @discardableResult
    private func send(_ text: String, on connection: Int32) -> Bool {
        send(Array(text.utf8)[...], on: connection)
    }

    /// Sends bytes; false once the client has gone. Never raises SIGPIPE.
    private func send(_ bytes: ArraySlice<UInt8>, on connection: Int32) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            rest = rest.dropFirst(written)
        }
        return true
    }
}
