import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A download that got an HTTP error status.
public struct HTTPStatusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The status code, e.g. 404.
    public var statusCode: Int
    public var url: URL
    public var description: String { "HTTP \(statusCode) for \(url.absoluteString)" }
}

extension NetActivityClient {
    /// Downloads `url` while holding an activity, like the seeds' `PRPConnection`.
    ///
    /// The activity is labelled with the URL's host and path (or `label`), reports bytes
    /// received against the expected content length, and ends on success, failure and
    /// cancellation alike.
    ///
    /// - Parameters:
    ///   - progressThreshold: the fraction (0...1) progress must advance before the next report;
    ///     with an unknown length, reports come every `progressThreshold` × 1 MiB.
    ///   - timeout: the longest the server may go quiet, in seconds.
    /// - Returns: the body.
    /// - Throws: `HTTPStatusError` for a status of 400 or more, the `URLError` of a failed
    ///   transfer, or `CancellationError` when the task is cancelled.
    public func download(
        _ url: URL, label: String? = nil, progressThreshold: Double = 0.01, timeout: TimeInterval = 60
    ) async throws -> Data {
        let label = label ?? Self.label(for: url)
        return try await tracking(label) { activity in
            let transfer = Transfer(url: url, activity: activity, threshold: max(0, progressThreshold))
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            let task = session.dataTask(with: url)
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.start(task, continuation)
                }
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// "host/path", cut to the service's 256-byte limit.
    static func label(for url: URL) -> String {
        var text = (url.host ?? url.absoluteString) + url.path
        while text.utf8.count > 256 { text.removeLast() }
        return text
    }
}

/// One transfer's delegate: collects the body and reports progress to the activity.
private final class Transfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let url: URL
    private let activity: Activity
    private let threshold: Double
    private let lock = NSLock()
    // Guarded by `lock`.
    private var body = Data()
    private var expected: UInt64 = 0
    private var reportedBytes: UInt64 = 0
    private var statusError: HTTPStatusError?
    private var continuation: CheckedContinuation<Data, any Error>?

    init(url: URL, activity: Activity, threshold: Double) {
        self.url = url
        self.activity = activity
        self.threshold = threshold
    }

    func start(_ task: URLSessionDataTask, _ continuation: CheckedContinuation<Data, any Error>) {
        lock.withLock { self.continuation = continuation }
        task.resume()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        lock.withLock {
            expected = response.expectedContentLength > 0 ? UInt64(response.expectedContentLength) : 0
            if status >= 400 { statusError = HTTPStatusError(statusCode: status, url: url) }
        }
        completionHandler(status >= 400 ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let report: (UInt64, UInt64)? = lock.withLock {
            body.append(data)
            let received = UInt64(body.count)
            let step = expected > 0 ? Double(expected) * threshold : threshold * 1_048_576
            guard Double(received - reportedBytes) >= max(step, 1) || received == expected else { return nil }
            reportedBytes = received
            return (received, expected)
        }
        if let (completed, total) = report { activity.report(completed: completed, total: total) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result): (CheckedContinuation<Data, any Error>?, Result<Data, any Error>) = lock.withLock {
            let waiting = self.continuation
            self.continuation = nil
            if let statusError { return (waiting, .failure(statusError)) }
            if let error {
                let cancelled = (error as? URLError)?.code == .cancelled
                return (waiting, .failure(cancelled ? CancellationError() : error))
            }
            if expected > 0, UInt64(body.count) < expected {
                return (waiting, .failure(URLError(.networkConnectionLost)))
            }
            return (waiting, .success(body))
        }
        if case .success(let data) = result {
            activity.report(completed: UInt64(data.count), total: max(expected, UInt64(data.count)))
        }
        continuation?.resume(with: result)
    }
}
