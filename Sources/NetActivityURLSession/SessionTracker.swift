import Foundation
import Locking
import NetActivity
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session delegate that tracks every task of an app's own `URLSession`, each task one
/// activity, and forwards every delegate call to the app's delegate: AFNetworking's activity
/// indicator manager, for URLSession on Linux. One line at session creation:
///
///     let session = URLSession(
///         configuration: .default,
///         delegate: NetActivityClient.shared.trackingDelegate(forwardingTo: myDelegate),
///         delegateQueue: nil)
///
/// A task's activity (labelled with its request's host and path, of kind `upload` for an upload
/// task and `download` otherwise) begins with the task's first
/// delegate call (the request body's first bytes for an upload, the response head otherwise),
/// reports bytes sent and received every `progressThreshold` of progress, and ends when the
/// task completes, fails or is cancelled, or when the session is invalidated. Bytes received by
/// data tasks are counted here, because on Linux `countOfBytesReceived` stays 0 while they run.
///
/// Like any session delegate, this sees only tasks made without a completion handler (the
/// delegate style); URLSession reports nothing to a delegate about the others.
public final class SessionTracker: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate,
    @unchecked Sendable
{
    /// The app's own delegate, which gets every call after the tracker.
    public let forwardingTo: (any URLSessionDelegate)?
    private let client: NetActivityClient
    private let threshold: Double
    /// Every mutable thing the tracker has: the `@unchecked Sendable` above rests on this lock
    /// alone (the rest is `let` and `Sendable`).
    private let tasks = Locked<[ObjectIdentifier: Tracked]>([:])

    private struct Tracked {
        var activity: Activity
        var progress = TransferProgress()
        var gate: ProgressGate
    }

    init(client: NetActivityClient, forwardingTo delegate: (any URLSessionDelegate)?, progressThreshold: Double) {
        self.client = client
        forwardingTo = delegate
        threshold = progressThreshold
    }

    /// The tasks being tracked right now.
    public var trackedTaskCount: Int { tasks.withLock { $0.count } }

    // MARK: - Tracking

    private func change(_ task: URLSessionTask, _ update: (inout TransferProgress) -> Void) {
        let report: (Activity, TransferProgress)? = tasks.withLock { tasks in
            let key = ObjectIdentifier(task)
            var tracked = tasks[key] ?? Tracked(
                activity: client.begin(
                    NetActivityClient.label(for: task.originalRequest?.url),
                    hints: ActivityHints(kind: task is URLSessionUploadTask ? .upload : .download)),
                gate: ProgressGate(threshold: threshold))
            update(&tracked.progress)
            let due = tracked.gate.shouldReport(tracked.progress)
            tasks[key] = tracked
            return due ? (tracked.activity, tracked.progress) : nil
        }
        if let (activity, progress) = report { activity.report(progress) }
    }

    private func finish(_ task: URLSessionTask) {
        tasks.withLock { $0.removeValue(forKey: ObjectIdentifier(task)) }?.activity.end()
    }

    // MARK: - URLSessionDelegate

    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let all = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks.values.map(\.activity)
        }
        for activity in all { activity.end() }
        forwardingTo?.urlSession(session, didBecomeInvalidWithError: error)
    }

    public func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let forwardingTo {
            forwardingTo.urlSession(session, didReceive: challenge, completionHandler: completionHandler)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    // MARK: - URLSessionTaskDelegate

    private var taskDelegate: (any URLSessionTaskDelegate)? { forwardingTo as? any URLSessionTaskDelegate }
    private var dataDelegate: (any URLSessionDataDelegate)? { forwardingTo as? any URLSessionDataDelegate }
    private var downloadDelegate: (any URLSessionDownloadDelegate)? { forwardingTo as? any URLSessionDownloadDelegate }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        change(task) { _ in }
        if let taskDelegate {
            taskDelegate.urlSession(
                session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                completionHandler: completionHandler)
        } else {
            completionHandler(request)
        }
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        change(task) { _ in }
        if let taskDelegate {
            taskDelegate.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        } else {
            completionHandler(.performDefaultHandling, nil)
        }
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        if let taskDelegate {
            taskDelegate.urlSession(session, task: task, needNewBodyStream: completionHandler)
        } else {
            completionHandler(nil)
        }
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        change(task) { progress in
            progress.bytesSent = UInt64(max(0, totalBytesSent))
            progress.bytesExpectedToSend = UInt64(max(0, totalBytesExpectedToSend))
        }
        taskDelegate?.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        taskDelegate?.urlSession(session, task: task, didFinishCollecting: metrics)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task)
        taskDelegate?.urlSession(session, task: task, didCompleteWithError: error)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLSession.DelayedRequestDisposition, URLRequest?) -> Void
    ) {
        if let taskDelegate {
            taskDelegate.urlSession(
                session, task: task, willBeginDelayedRequest: request, completionHandler: completionHandler)
        } else {
            completionHandler(.continueLoading, nil)
        }
    }

    // MARK: - URLSessionDataDelegate

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        change(dataTask) { progress in
            progress.hasResponse = true
            progress.bytesExpectedToReceive = UInt64(max(0, response.expectedContentLength))
        }
        if let dataDelegate {
            dataDelegate.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
        } else {
            completionHandler(.allow)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        change(dataTask) { $0.bytesReceived += UInt64(data.count) }
        dataDelegate?.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask
    ) {
        dataDelegate?.urlSession(session, dataTask: dataTask, didBecome: downloadTask)
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        if let dataDelegate {
            dataDelegate.urlSession(
                session, dataTask: dataTask, willCacheResponse: proposedResponse, completionHandler: completionHandler)
        } else {
            completionHandler(proposedResponse)
        }
    }

    // MARK: - URLSessionDownloadDelegate

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        downloadDelegate?.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        change(downloadTask) { progress in
            progress.hasResponse = true
            progress.bytesReceived = UInt64(max(0, totalBytesWritten))
            progress.bytesExpectedToReceive = UInt64(max(0, totalBytesExpectedToWrite))
        }
        downloadDelegate?.urlSession(
            session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite)
    }

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {
        downloadDelegate?.urlSession(
            session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
    }
}

extension NetActivityClient {
    /// A delegate for an app's own `URLSession` that tracks every task of the session (each one
    /// activity) and forwards every call to `delegate`. Pass it as the session's delegate:
    ///
    ///     URLSession(configuration: .default, delegate: client.trackingDelegate(forwardingTo: self), delegateQueue: nil)
    ///
    /// - Parameter progressThreshold: the fraction (0...1) a task's progress must advance
    ///   before the next report.
    public func trackingDelegate(
        forwardingTo delegate: (any URLSessionDelegate)? = nil, progressThreshold: Double = 0.01
    ) -> SessionTracker {
        SessionTracker(client: self, forwardingTo: delegate, progressThreshold: progressThreshold)
    }
}
