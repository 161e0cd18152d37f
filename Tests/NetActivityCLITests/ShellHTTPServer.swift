import BusTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Python's `http.server` on 127.0.0.1 (never another interface), answering each GET only once
/// the test releases it, so a `curl` against it runs exactly as long as the test needs.
final class ShellHTTPServer {
    let port: Int
    private let process: ChildProcess
    private let gate: URL
    private let directory: URL

    private static let script = #"""
        import http.server, os, sys, time
        port_file, gate = sys.argv[1], sys.argv[2]
        class Slow(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                # The test creates the gate file when the transfer may finish.
                while not os.path.exists(gate):
                    time.sleep(0.02)
                body = b"done\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
        with open(port_file + ".part", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(port_file + ".part", port_file)
        server.serve_forever()
        """#

    init() throws {
        try requireTool("python3")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("netactivity-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port")
        gate = directory.appendingPathComponent("release")
        let process = try ChildProcess("python3", ["-c", Self.script, portFile.path, gate.path])
        var port: Int?
        try waitUntil("python's http.server to listen on 127.0.0.1") {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
            return port != nil || !process.isRunning
        }
        guard let port else { throw BusTestError("http.server did not start: \(process.stderrText)") }
        self.process = process
        self.port = port
    }

    deinit {
        process.send(signal: SIGKILL)
        _ = try? process.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(at: directory)
    }

    var url: String { "http://127.0.0.1:\(port)/file" }

    /// Lets every request waiting, and every later one, finish.
    func release() throws {
        try Data().write(to: gate)
    }
}
