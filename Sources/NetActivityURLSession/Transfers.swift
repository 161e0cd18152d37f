import Foundation
import NetActivity
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Transfers that hold an activity while they run: the seeds' `PRPConnection` on URLSession.
///
/// Each call holds one activity labelled with the request's host and path (or `label`), of kind
/// `upload` when it sends a body and `download` otherwise,
/// reports bytes sent and received against the expected total every `progressThreshold`
/// (a fraction, 0...1) of progress, hands the same progress to `progress` (on URLSession's
/// delegate queue), and ends the activity when the transfer succeeds, fails or is cancelled.
/// As with URLSession, an HTTP error status is a response like any other: check the returned
/// `HTTPURLResponse`'s `statusCode`.
///
/// Errors thrown: `CancellationError` when the calling task is cancelled, else the transfer's
/// `URLError` (a body shorter than its `Content-Length` is `.networkConnectionLost`), or the
/// file system's error for a destination that cannot be written.
extension NetActivityClient {
    /// Sends `request` and returns the response body and the response.
    public func data(
        for request: URLRequest, label: String? = nil, configuration: URLSessionConfiguration = .default,
        progressThreshold: Double = 0.01, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        let outcome = try await transfer(
            request, label: label, configuration: configuration, sink: .memory, bytesToSend: 0,
            threshold: progressThreshold, progress: progress
        ) { session, delegate in session.dataTask(with: request) }
        return (outcome.body, outcome.response)
    }

    /// Uploads `body` with `request` (its method, e.g. POST or PUT, and headers) and returns
    /// the response body and the response.
    public func upload(
        for request: URLRequest, from body: Data, label: String? = nil,
        configuration: URLSessionConfiguration = .default, progressThreshold: Double = 0.01,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        let outcome = try await transfer(
            request, label: label, configuration: configuration, sink: .memory, bytesToSend: UInt64(body.count),
            threshold: progressThreshold, progress: progress
        ) { session, _ in session.uploadTask(with: request, from: body) }
        return (outcome.body, outcome.response)
    }

    /// Uploads the file at `fileURL` with `request`, streamed from disk, and returns the
    /// response body and the response.
    public func upload(
        for request: URLRequest, fromFile fileURL: URL, label: String? = nil,
        configuration: URLSessionConfiguration = .default, progressThreshold: Double = 0.01,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (Data, URLResponse) {
        let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.uint64Value ?? 0
        let outcome = try await transfer(
            request, label: label, configuration: configuration, sink: .memory, bytesToSend: size,
            threshold: progressThreshold, progress: progress
        ) { session, _ in session.uploadTask(with: request, fromFile: fileURL) }
        return (outcome.body, outcome.response)
    }

    /// Downloads `request`'s response body into the file at `destination` as it arrives
    /// (memory stays flat however large it is) and returns the response. The file is created
    /// or replaced when the response begins and removed if the transfer fails.
    @discardableResult
    public func download(
        for request: URLRequest, to destination: URL, label: String? = nil,
        configuration: URLSessionConfiguration = .default, progressThreshold: Double = 0.01,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> URLResponse {
        try await transfer(
            request, label: label, configuration: configuration, sink: .file(destination), bytesToSend: 0,
            threshold: progressThreshold, progress: progress
        ) { session, _ in session.dataTask(with: request) }.response
    }

    private func transfer(
        _ request: URLRequest, label: String?, configuration: URLSessionConfiguration, sink: BodySink,
        bytesToSend: UInt64, threshold: Double, progress: (@Sendable (TransferProgress) -> Void)?,
        makeTask: (URLSession, Transfer) -> URLSessionTask
    ) async throws -> Transfer.Outcome {
        try Task.checkCancellation()
        let activity = begin(
            label ?? Self.label(for: request.url), hints: ActivityHints(kind: bytesToSend > 0 ? .upload : .download))
        defer { activity.end() }
        let transfer = Transfer(
            activity: activity, sink: sink, threshold: threshold, bytesToSend: bytesToSend, progress: progress)
        let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
        return try await transfer.run(makeTask(session, transfer), on: session)
    }
}
