import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import NetActivityURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// However a transfer ends early, through whichever of the client's URLSession calls, its
/// activity ends with it: one test per way of ending, run for each call.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TransferEndingTests {
    /// The calls that fetch a body.
    enum Call: String, CaseIterable, CustomTestStringConvertible {
        case deprecatedDownload = "download(_:)"
        case data = "data(for:)"
        case downloadToFile = "download(for:to:)"

        var testDescription: String { rawValue }

        func fetch(_ url: URL, with client: NetActivityClient) async throws {
            switch self {
            case .deprecatedDownload:
                _ = try await client.legacyDownload(url)
            case .data:
                _ = try await client.data(for: URLRequest(url: url))
            case .downloadToFile:
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("ending-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                _ = try await client.download(for: URLRequest(url: url), to: file)
            }
        }
    }

    @Test(arguments: Call.allCases)
    func cancellingThrowsCancellationErrorAndEndsTheActivity(_ call: Call) async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 100_000)
            exchange.send(Array(repeating: 1, count: 5_000))
            exchange.waitForClientToClose()
        }
        let transfer = Task { try await call.fetch(server.url("/cancelled"), with: client) }
        try await waitUntil("the transfer under way") {
            (try probe.activity("127.0.0.1/cancelled")?.completed ?? 0) > 0
        }
        transfer.cancel()
        await #expect(throws: CancellationError.self) { try await transfer.value }
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }

    @Test(arguments: Call.allCases)
    func aConnectionDroppedMidBodyThrowsAndEndsTheActivity(_ call: Call) async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let drop = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 10_000)
            exchange.send(Array(repeating: 1, count: 2_000))
            drop.wait()
            exchange.close()
        }
        let transfer = Task { try await call.fetch(server.url("/dropped"), with: client) }
        try await waitUntil("the partial transfer's progress") {
            try probe.activity("127.0.0.1/dropped")?.completed == 2_000
        }
        drop.open()
        do {
            try await transfer.value
            Issue.record("a short body must throw")
        } catch {
            #expect(!(error is HTTPStatusError))
            #expect(!(error is CancellationError))
        }
        await client.flush()
        #expect(try probe.activities().isEmpty)
        #expect(try probe.count() == 0)
    }
}
