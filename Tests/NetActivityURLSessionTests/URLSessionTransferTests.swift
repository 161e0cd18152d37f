import DBus
import BusTestSupport
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import NetActivityURLSession
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `data(for:)`, `upload(for:…)` and `download(for:to:)` against a loopback HTTP server: one
/// activity per transfer, labelled host/path, with progress, ended however the transfer ends.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct URLSessionTransferTests {
    @Test func aRequestWithHeadersReturnsTheBodyAndTheResponse() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        let answer = ThreadLatch()
        let seenHeader = Locked<String?>(nil)
        let server = try LoopbackHTTPServer { exchange in
            seenHeader.withLock { $0 = exchange.header("X-Feed-Token") }
            answer.wait()
            let body = Array("hello".utf8)
            exchange.sendHead(contentLength: body.count, extraHeaders: ["X-Answer: 42"])
            exchange.send(body)
        }
        var request = URLRequest(url: server.url("/api/items"))
        request.setValue("secret", forHTTPHeaderField: "X-Feed-Token")
        let transfer = Task { try await client.data(for: request) }
        try await waitUntil("the request's activity labelled host/path") {
            try probe.activity("127.0.0.1/api/items") != nil
        }
        answer.open()
        let (body, response) = try await transfer.value
        #expect(String(decoding: body, as: UTF8.self) == "hello")
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "X-Answer") == "42")
        #expect(seenHeader.withLock { $0 } == "secret")
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func anUploadReportsItsProgressToTheCallerAndTheService() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let payload = Data((0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0) })
        let received = Locked(0)
        let respond = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            let length = Int(exchange.header("Content-Length") ?? "") ?? 0
            received.withLock { $0 = exchange.readBody(count: length) }
            respond.wait()
            exchange.sendHead(status: "201 Created", contentLength: 2)
            exchange.send(Array("ok".utf8))
        }
        var request = URLRequest(url: server.url("/upload/photo.jpg"))
        request.httpMethod = "POST"
        let reports = Locked<[TransferProgress]>([])
        let upload = Task {
            try await client.upload(for: request, from: payload, progressThreshold: 0.1) { progress in
                reports.withLock { $0.append(progress) }
            }
        }
        try await waitUntil("the whole body at the server and in the service's activity") {
            try received.withLock { $0 } == payload.count
                && (probe.activity("127.0.0.1/upload/photo.jpg")?.completed ?? 0) >= UInt64(payload.count)
        }
        let during = try #require(try probe.activity("127.0.0.1/upload/photo.jpg"))
        #expect(during.total == UInt64(payload.count), "the body's length while the response is awaited")
        respond.open()
        let (body, response) = try await upload.value
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        #expect(body == Data("ok".utf8))
        let seen = reports.withLock { $0 }
        #expect(seen.count >= 3 && seen.count <= 15, "reports every 10%: \(seen.count)")
        #expect(seen.map(\.bytesSent) == seen.map(\.bytesSent).sorted())
        #expect(seen.last?.bytesSent == UInt64(payload.count))
        #expect(seen.last?.percentComplete == 100)
        #expect(seen.contains { ($0.percentComplete ?? 0) > 0 && ($0.percentComplete ?? 100) < 100 })
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func anUploadFromAFile() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(repeating: 7, count: 100_000).write(to: file)
        let received = Locked(0)
        let server = try LoopbackHTTPServer { exchange in
            received.withLock { $0 = exchange.readBody(count: Int(exchange.header("Content-Length") ?? "") ?? 0) }
            exchange.sendHead(contentLength: 0)
        }
        var request = URLRequest(url: server.url("/put/file"))
        request.httpMethod = "PUT"
        let last = Locked<TransferProgress?>(nil)
        let (_, response) = try await client.upload(for: request, fromFile: file) { progress in
            last.withLock { $0 = progress }
        }
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(received.withLock { $0 } == 100_000)
        #expect(last.withLock { $0 }?.bytesSent == 100_000)
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func aLargeDownloadGoesToAFileWithFlatMemory() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let size = 200 * 1024 * 1024
        let chunk = [UInt8](repeating: 0x5A, count: 1024 * 1024)
        let server = try LoopbackHTTPServer(lifetime: .seconds(120)) { exchange in
            exchange.sendHead(contentLength: size)
            for _ in 0..<(size / chunk.count) { guard exchange.send(chunk) else { return } }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let before = try residentSetSize()
        let peak = Locked(before)
        let sampler = Task {
            while !Task.isCancelled {
                let now = (try? residentSetSize()) ?? 0
                peak.withLock { $0 = max($0, now) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let response = try await client.download(for: URLRequest(url: server.url("/big.iso")), to: file)
        sampler.cancel()
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let written = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        #expect(written?.intValue == size)
        let growth = peak.withLock { $0 } - before
        print("200 MB download to a file: peak RSS growth \(growth / 1024 / 1024) MiB")
        // Held in memory, the body alone would add 200 MiB. Streamed, growth is what the server
        // in this same process and swift-corelibs' URLSession buffer while the file catches up:
        // 20 to 100 MiB on this 2-core machine depending on scheduling, never near the body.
        #expect(growth < 128 * 1024 * 1024, "RSS grew by \(growth / 1024 / 1024) MiB for a 200 MB body")
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func aFailedDownloadRemovesTheFileAndEndsTheActivity() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 10_000)
            exchange.send(Array(repeating: 1, count: 2_000))
            exchange.close()
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("partial-\(UUID().uuidString)")
        await #expect(throws: (any Error).self) {
            try await client.download(for: URLRequest(url: server.url("/cut")), to: file)
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func anHTTPErrorIsAResponseAndEndsTheActivity() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let answer = ThreadLatch()
        let server = try LoopbackHTTPServer { exchange in
            answer.wait()
            exchange.sendHead(status: "503 Service Unavailable", contentLength: 4)
            exchange.send(Array("busy".utf8))
        }
        let transfer = Task { try await client.data(for: URLRequest(url: server.url("/down"))) }
        try await waitUntil("the activity while the server thinks") { try probe.activity("127.0.0.1/down") != nil }
        answer.open()
        let (body, response) = try await transfer.value
        #expect((response as? HTTPURLResponse)?.statusCode == 503)
        #expect(body == Data("busy".utf8))
        await client.flush()
        #expect(try probe.count() == 0)
    }

    @Test func progressValues() {
        var progress = TransferProgress()
        #expect(progress.percentComplete == nil)
        progress.bytesExpectedToSend = 100
        progress.bytesSent = 50
        #expect(progress.percentComplete == 50)
        progress.bytesSent = 100
        progress.hasResponse = true
        #expect(progress.total == 0, "a response of unknown length makes the total unknown")
        progress.bytesExpectedToReceive = 300
        progress.bytesReceived = 100
        #expect(progress.completed == 200 && progress.total == 400 && progress.percentComplete == 50)
    }
}
