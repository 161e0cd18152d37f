import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP server on 127.0.0.1 that serves `/N` as N MiB of zeros at about 1 MiB a second,
/// so the example runs without a network.
final class SlowServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        port = UInt16(bigEndian: address.sin_port)
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func url(megabytes: Int) -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(megabytes)")!
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { Self.serve(connection) }
        }
    }

    private static func serve(_ connection: Int32) {
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(connection, &buffer, buffer.count, 0)
        guard count > 0 else { return }
        let requestLine = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
        let megabytes = requestLine.count > 1 ? Int(requestLine[1].dropFirst()) ?? 1 : 1
        let size = megabytes << 20
        let head = "HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\nConnection: close\r\n\r\n"
        guard send(connection, head, head.utf8.count, Int32(MSG_NOSIGNAL)) > 0 else { return }
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        for _ in 0..<(size / chunk.count) {
            guard send(connection, chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 else { return }
            usleep(62_500)  // 16 chunks a second: 1 MiB/s
        }
    }
}
