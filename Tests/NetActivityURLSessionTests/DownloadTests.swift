import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import NetActivityURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The deprecated `download(_:)` against a loopback HTTP server: the activity lives exactly as long as the
/// transfer, whatever way it ends.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct DownloadTests {
    static func body(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test func aBodyWithContentLengthIsReturnedWhileTheActivityShowsItsTotal() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        let body = Self.body(64 * 1024)
        let firstPart = 16 * 1024
        let rest = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: body.count)
            exchange.send(Array(body[..<firstPart]))
            rest.wait()
            exchange.trickle(Array(body[firstPart...]), chunk: 8 * 1024, pause: .milliseconds(20))
        }
        let url = server.url("/files/feed.xml")
        let label = "127.0.0.1/files/feed.xml"

        let download = Task { try await client.legacyDownload(url) }
        try await waitUntil("the download's activity with its total while the body trickles: \(String(describing: try? probe.activities()))") {
            guard let activity = try probe.activity(label) else { return false }
            // Reports come every 1% (655 bytes) of progress, so the last few bytes may wait.
            return activity.total == UInt64(body.count) && activity.completed >= UInt64(firstPart - 655)
        }
        let midway = try #require(try probe.activity(label))
        #expect(midway.completed <= UInt64(firstPart))
        #expect(try probe.processID(of: midway.owner) == UInt32(getpid()))
        rest.open()

        let data = try await download.value
        #expect(data == Data(body))
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func aCustomLabelAndAnUnknownLength() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let body = Self.body(3000)
        let go = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: nil, extraHeaders: ["Connection: close"])
            exchange.send(Array(body[..<1000]))
            go.wait()
            exchange.send(Array(body[1000...]))
        }
        let download = Task { try await client.legacyDownload(server.url("/stream"), label: "Fetch stream") }
        try await waitUntil("the custom-labelled activity") { try probe.activity("Fetch stream") != nil }
        #expect(try probe.activity("Fetch stream")?.total == 0, "the total is unknown without Content-Length")
        go.open()
        #expect(try await download.value == Data(body))
        await client.flush()
        #expect(try probe.activities().isEmpty)
    }

    @Test func aNotFoundThrowsHTTPStatusErrorAndEndsTheActivity() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let answer = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            answer.wait()
            let text = Array("not found".utf8)
            exchange.sendHead(status: "404 Not Found", contentLength: text.count)
            exchange.send(text)
        }
        let url = server.url("/missing")
        let download = Task { try await client.legacyDownload(url) }
        try await waitUntil("the activity while the request waits") {
            try probe.activity("127.0.0.1/missing") != nil
        }
        answer.open()

        do {
            _ = try await download.value
            Issue.record("a 404 must throw")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 404)
            #expect(error.url == url)
        }
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test func aServerThatStallsAfterTheHeadersTimesOut() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 1000)
            exchange.send(Self.body(10))
            exchange.waitForClientToClose()
        }
        let clock = ContinuousClock()
        let started = clock.now
        let download = Task { try await client.legacyDownload(server.url("/stall"), timeout: 1) }
        try await waitUntil("the stalled download's activity") { try probe.activity("127.0.0.1/stall") != nil }

        await #expect(throws: (any Error).self) { try await download.value }
        #expect(clock.now - started < .seconds(8), "the timeout, not the server, ended it")
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test func aRefusedConnectionThrowsAndEndsTheActivity() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        // A port that was just listening and is now closed: nothing answers there.
        let port = try LoopbackHTTPServer(connections: 0) { _ in }.port
        await #expect(throws: (any Error).self) {
            try await client.legacyDownload(URL(string: "http://127.0.0.1:\(port)/nothing")!, timeout: 5)
        }
        await client.flush()
        #expect(try probe.activities().isEmpty)
    }

    @Test func aDownloadInAnAlreadyCancelledTaskThrowsAtOnce() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 100_000)
            exchange.send(Self.body(5_000))
            exchange.waitForClientToClose()
        }
        let go = Gate()
        let download = Task {
            await go.wait()
            return try await client.legacyDownload(server.url("/never"), timeout: 30)
        }
        download.cancel()
        go.open()
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: CancellationError.self) { try await download.value }
        #expect(clock.now - started < .seconds(5))
        await client.flush()
        #expect(try probe.activities().isEmpty)
    }
}

/// The deprecated `download(_:)`, reached through a protocol so that the tests calling it on
/// purpose do not warn: the requirement is not deprecated, the client's method is its witness.
protocol DeprecatedDownload {
    func download(_ url: URL, label: String?, progressThreshold: Double, timeout: TimeInterval) async throws -> Data
}

extension NetActivityClient: DeprecatedDownload {}

extension DeprecatedDownload {
    func legacyDownload(_ url: URL, label: String? = nil, timeout: TimeInterval = 60) async throws -> Data {
        try await download(url, label: label, progressThreshold: 0.01, timeout: timeout)
    }
}
