import Foundation
import NetActivity
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a transfer's response body goes.
enum BodySink {
    /// Collected in memory and returned.
    case memory
    /// Streamed to a file as it arrives; removed again if the transfer fails.
    case file(URL)
}

/// One call's task and session delegate: reports progress to the activity and the caller,
/// keeps the body, and resumes the caller exactly once, whatever way the task ends.
final class Transfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct Outcome {
        var response: URLResponse
        var body: Data
    }

    private let activity: Activity
    private let sink: BodySink
    private let onProgress: (@Sendable (TransferProgress) -> Void)?
    private let lock = NSLock()
    // Guarded by `lock`.
    private var gate: ProgressGate
    private var progress = TransferProgress()
    private var response: URLResponse?
    private var body = Data()
    private var file: FileHandle?
    private var failure: (any Error)?
    private var continuation: CheckedContinuation<Outcome, any Error>?

    init(
        activity: Activity, sink: BodySink, threshold: Double, bytesToSend: UInt64,
        progress onProgress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.activity = activity
        self.sink = sink
        self.onProgress = onProgress
        gate = ProgressGate(threshold: threshold)
        progress.bytesExpectedToSend = bytesToSend
    }

    /// Runs `task` on `session` to its end. Cancelling the calling task cancels it.
    func run(_ task: URLSessionTask, on session: URLSession) async throws -> Outcome {
        defer { session.finishTasksAndInvalidate() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.withLock { self.continuation = continuation }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    // MARK: - Delegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        changeProgress { progress in
            progress.bytesSent = UInt64(max(0, totalBytesSent))
            if totalBytesExpectedToSend > 0 { progress.bytesExpectedToSend = UInt64(totalBytesExpectedToSend) }
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        var disposition = URLSession.ResponseDisposition.allow
        lock.withLock {
            self.response = response
            if case .file(let destination) = sink {
                do {
                    _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
                    file = try FileHandle(forWritingTo: destination)
                } catch {
                    failure = error
                    disposition = .cancel
                }
            }
        }
        changeProgress { progress in
            progress.hasResponse = true
            progress.bytesExpectedToReceive = response.expectedContentLength > 0 ? UInt64(response.expectedContentLength) : 0
        }
        completionHandler(disposition)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Counted here: on Linux, countOfBytesReceived stays 0 while a data task runs.
        let writeFailed: Bool = lock.withLock {
            if let file {
                do { try file.write(contentsOf: data) } catch {
                    failure = error
                    return true
                }
            } else if case .memory = sink {
                body.append(data)
            }
            return false
        }
        if writeFailed {
            dataTask.cancel()
            return
        }
        changeProgress { $0.bytesReceived += UInt64(data.count) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result): (CheckedContinuation<Outcome, any Error>?, Result<Outcome, any Error>) =
            lock.withLock {
                let waiting = self.continuation
                self.continuation = nil
                try? file?.close()
                file = nil
                return (waiting, outcome(error))
            }
        if case .failure = result, case .file(let destination) = sink {
            try? FileManager.default.removeItem(at: destination)
        }
        if case .success = result {
            let final = lock.withLock { progress }
            activity.report(final)
            onProgress?(final)
        }
        continuation?.resume(with: result)
    }

    // MARK: - Progress

    private func changeProgress(_ change: (inout TransferProgress) -> Void) {
        let due: TransferProgress? = lock.withLock {
            change(&progress)
            return gate.shouldReport(progress) ? progress : nil
        }
        guard let due else { return }
        activity.report(due)
        onProgress?(due)
    }

    /// Called with `lock` held.
    private func outcome(_ error: (any Error)?) -> Result<Outcome, any Error> {
        if let failure { return .failure(failure) }
        if let error {
            return .failure((error as? URLError)?.code == .cancelled ? CancellationError() : error)
        }
        guard let response else { return .failure(URLError(.badServerResponse)) }
        if progress.bytesExpectedToReceive > 0, progress.bytesReceived < progress.bytesExpectedToReceive {
            return .failure(URLError(.networkConnectionLost))
        }
        return .success(Outcome(response: response, body: body))
    }
}
