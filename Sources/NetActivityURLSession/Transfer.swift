import Foundation
import Locking
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
    /// Every mutable thing the transfer has: the `@unchecked Sendable` above rests on this lock
    /// alone (the rest is `let` and `Sendable`).
    private let state: Locked<State>

    private struct State {
        var gate: ProgressGate
        var progress = TransferProgress()
        var response: URLResponse?
        var body = Data()
        var file: FileHandle?
        var failure: (any Error)?
        var continuation: CheckedContinuation<Outcome, any Error>?

        func outcome(_ error: (any Error)?) -> Result<Outcome, any Error> {
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

    init(
        activity: Activity, sink: BodySink, threshold: Double, bytesToSend: UInt64,
        progress onProgress: (@Sendable (TransferProgress) -> Void)?
    ) {
        self.activity = activity
        self.sink = sink
        self.onProgress = onProgress
        var state = State(gate: ProgressGate(threshold: threshold))
        state.progress.bytesExpectedToSend = bytesToSend
        self.state = Locked(state)
    }

    /// Runs `task` on `session` to its end. Cancelling the calling task cancels it.
    func run(_ task: URLSessionTask, on session: URLSession) async throws -> Outcome {
        defer { session.finishTasksAndInvalidate() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.continuation = continuation }
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
        state.withLock { state in
            state.response = response
            if case .file(let destination) = sink {
                do {
                    _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
                    state.file = try FileHandle(forWritingTo: destination)
                } catch {
                    state.failure = error
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
        let writeFailed: Bool = state.withLock { state in
            if let file = state.file {
                do { try file.write(contentsOf: data) } catch {
                    state.failure = error
                    return true
                }
            } else if case .memory = sink {
                state.body.append(data)
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
            state.withLock { state in
                let waiting = state.continuation
                state.continuation = nil
                try? state.file?.close()
                state.file = nil
                return (waiting, state.outcome(error))
            }
        if case .failure = result, case .file(let destination) = sink {
            try? FileManager.default.removeItem(at: destination)
        }
        if case .success = result {
            let final = state.withLock { $0.progress }
            activity.report(final)
            onProgress?(final)
        }
        continuation?.resume(with: result)
    }

    // MARK: - Progress

    private func changeProgress(_ change: (inout TransferProgress) -> Void) {
        let due: TransferProgress? = state.withLock { state in
            change(&state.progress)
            return state.gate.shouldReport(state.progress) ? state.progress : nil
        }
        guard let due else { return }
        activity.report(due)
        onProgress?(due)
    }
}
