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

/// An app's own session tracked with one line: every task one activity, the app's delegate
/// still called for everything.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct SessionTrackerTests {
    /// The app's delegate: collects bodies and completions as an app would.
    final class AppDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let bodies = Locked<[Int: Int]>([:])
        let completions = Locked<[Int: String]>([:])
        let responses = Locked(0)

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            responses.withLock { $0 += 1 }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            bodies.withLock { $0[dataTask.taskIdentifier, default: 0] += data.count }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            completions.withLock { $0[task.taskIdentifier] = error.map { "\($0)" } ?? "ok" }
        }
    }

    @Test func everyTaskOfTheAppsSessionIsOneActivityAndTheAppsDelegateGetsEverything() async throws {
        let service = try ServiceDaemon()
        let problems = ProblemLog()
        let client = service.client(problems)
        let probe = try service.probe()
        let finish = ThreadLatch()
        let server = try LoopbackHTTPServer(connections: 3) { exchange in
            let path = exchange.requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            if path == "/missing" {
                exchange.sendHead(status: "404 Not Found", contentLength: 0)
                return
            }
            exchange.sendHead(contentLength: 40_000)
            exchange.send(Array(repeating: 3, count: 10_000))
            finish.wait()
            exchange.send(Array(repeating: 3, count: 30_000))
        }
        let app = AppDelegate()
        let session = URLSession(
            configuration: .default, delegate: client.trackingDelegate(forwardingTo: app), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let feeds = session.dataTask(with: server.url("/feeds.xml"))
        let photo = session.dataTask(with: server.url("/photos/1.jpg"))
        let missing = session.dataTask(with: server.url("/missing"))
        for task in [feeds, photo, missing] { task.resume() }

        try await waitUntil("two tasks' activities with their received bytes: \(String(describing: try? probe.activities()))") {
            let activities = try probe.activities()
            return Set(activities.map(\.label)) == ["127.0.0.1/feeds.xml", "127.0.0.1/photos/1.jpg"]
                && activities.allSatisfy { $0.completed == 10_000 && $0.total == 40_000 }
        }
        try await waitUntil("the 404 task to complete") {
            app.completions.withLock { $0[missing.taskIdentifier] } != nil
        }
        #expect(try probe.activity("127.0.0.1/missing") == nil, "a finished task's activity has ended")
        finish.open()
        try await waitUntil("all three tasks to complete at the app's delegate") {
            app.completions.withLock { $0.count } == 3
        }
        #expect(app.completions.withLock { $0[feeds.taskIdentifier] } == "ok")
        #expect(app.bodies.withLock { $0[feeds.taskIdentifier] } == 40_000)
        #expect(app.bodies.withLock { $0[photo.taskIdentifier] } == 40_000)
        #expect(app.responses.withLock { $0 } == 3)
        await client.flush()
        #expect(try probe.count() == 0)
        #expect(problems.all.isEmpty, "\(problems.all)")
    }

    @Test func aCancelledTaskEndsItsActivity() async throws {
        let service = try ServiceDaemon()
        let client = service.client(ProblemLog())
        let probe = try service.probe()
        let server = try LoopbackHTTPServer { exchange in
            exchange.sendHead(contentLength: 100_000)
            exchange.send(Array(repeating: 1, count: 1_000))
            exchange.waitForClientToClose()
        }
        let session = URLSession(configuration: .default, delegate: client.trackingDelegate(), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: server.url("/stuck"))
        task.resume()
        try await waitUntil("the task's activity") { try probe.activity("127.0.0.1/stuck")?.completed == 1_000 }
        task.cancel()
        try await waitUntil("the cancelled task's activity to end") { try probe.count() == 0 }
    }
}
