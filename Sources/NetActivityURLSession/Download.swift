import Foundation
import NetActivity
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
    /// Downloads `url` into memory while holding an activity (the 0.1 API).
    ///
    /// Kept for existing callers; `data(for:)` does the same for any `URLRequest` and returns
    /// the response, and `download(for:to:)` streams a large body to a file.
    ///
    /// - Parameters:
    ///   - progressThreshold: the fraction (0...1) progress must advance before the next report;
    ///     with an unknown length, reports come every `progressThreshold` × 1 MiB.
    ///   - timeout: the longest the server may go quiet, in seconds.
    /// - Returns: the body.
    /// - Throws: `HTTPStatusError` for a status of 400 or more, the `URLError` of a failed
    ///   transfer, or `CancellationError` when the task is cancelled.
    @available(*, deprecated, message: "use data(for: URLRequest(url: url)), which returns the response too")
    public func download(
        _ url: URL, label: String? = nil, progressThreshold: Double = 0.01, timeout: TimeInterval = 60
    ) async throws -> Data {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let (body, response) = try await data(
            for: URLRequest(url: url), label: label, configuration: configuration, progressThreshold: progressThreshold)
        if let status = (response as? HTTPURLResponse)?.statusCode, status >= 400 {
            throw HTTPStatusError(statusCode: status, url: url)
        }
        return body
    }
}
