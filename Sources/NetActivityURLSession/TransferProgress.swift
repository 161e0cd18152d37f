import NetActivity

/// How far one transfer has come, in both directions: what a progress bar or the seeds'
/// `PRPConnection` progress block shows.
public struct TransferProgress: Sendable, Equatable {
    /// Request body bytes sent so far.
    public var bytesSent: UInt64 = 0
    /// The request body's length; 0 without a body or when unknown.
    public var bytesExpectedToSend: UInt64 = 0
    /// Response body bytes received so far.
    public var bytesReceived: UInt64 = 0
    /// The response's `Content-Length`; 0 when unknown or before the response began.
    public var bytesExpectedToReceive: UInt64 = 0
    /// Whether the response's head has arrived.
    public var hasResponse = false

    public init() {}

    /// Bytes sent and received so far.
    public var completed: UInt64 { bytesSent + bytesReceived }

    /// Bytes expected in both directions, 0 while unknown: the request body, plus the response
    /// body once its head has arrived (unknown if it has no `Content-Length`).
    public var total: UInt64 {
        guard hasResponse else { return bytesExpectedToSend }
        return bytesExpectedToReceive > 0 ? bytesExpectedToSend + bytesExpectedToReceive : 0
    }

    /// `completed / total` in percent (0...100), or nil while the total is unknown.
    public var percentComplete: Double? {
        total > 0 ? min(100, Double(completed) * 100 / Double(total)) : nil
    }
}

/// Decides when progress has advanced enough to be worth a report: by `threshold` (a fraction
/// of the total), or every `threshold` × 1 MiB while the total is unknown, and always at the end.
struct ProgressGate {
    var threshold: Double
    private var lastCompleted: UInt64 = 0
    private var lastTotal: UInt64 = 0

    init(threshold: Double) {
        self.threshold = max(0, threshold)
    }

    mutating func shouldReport(_ progress: TransferProgress) -> Bool {
        let (completed, total) = (progress.completed, progress.total)
        let step = total > 0 ? Double(total) * threshold : threshold * 1_048_576
        let advanced = completed >= lastCompleted ? completed - lastCompleted : 0
        guard total != lastTotal || (total > 0 && completed == total) && advanced > 0 || Double(advanced) >= max(step, 1)
        else { return false }
        lastCompleted = completed
        lastTotal = total
        return true
    }
}

extension Activity {
    /// Reports a transfer's progress in both directions.
    func report(_ progress: TransferProgress) {
        report(completed: progress.completed, total: progress.total)
    }
}
