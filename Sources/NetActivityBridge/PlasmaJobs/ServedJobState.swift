/// A served job as its caller described it, and the activity that follows from it: a value,
/// changed only by `apply(_:)`, so what a sequence of calls shows is tested without a bus.
struct ServedJobState: Equatable, Sendable {
    var title = ""
    var infoMessage = ""
    var descriptionFields: [UInt32: (name: String, value: String)] = [:]
    var processedBytes: UInt64?
    var totalBytes: UInt64?
    var percent: UInt32?
    var speed: UInt64?
    var suspended = false
    var error: UInt32?
    var terminated = false

    /// How far along the job is, as the activity reports it.
    enum Progress: Equatable, Sendable {
        case bytes(completed: UInt64, total: UInt64)
        case fraction(Double)
    }

    mutating func apply(_ changes: [JobChange]) {
        for change in changes {
            switch change {
            case .title(let text): title = text
            case .infoMessage(let text): infoMessage = text
            case .descriptionField(let number, let name, let value): descriptionFields[number] = (name, value)
            case .clearDescriptionField(let number): descriptionFields[number] = nil
            case .processedBytes(let amount): processedBytes = amount
            case .totalBytes(let amount): totalBytes = amount
            case .percent(let value): percent = value
            case .speed(let value): speed = value
            case .suspended(let flag): suspended = flag
            case .error(let code): error = code
            case .terminated: terminated = true
            }
        }
    }

    /// Whether there is anything to call the job: an activity's label never changes once it
    /// began, so it waits for one.
    var isNamed: Bool { !title.isEmpty || !infoMessage.isEmpty }

    /// The activity's label: the title, then the file the job works on (the last part of its
    /// first description field's value, a KIO job's source), else the info message. "Copying:
    /// movie.mkv", "Downloading: Fetching feeds".
    var label: String {
        let detail = fileName ?? infoMessage
        return [title, detail].filter { !$0.isEmpty }.joined(separator: ": ")
    }

    /// The last path segment of the first description field's value, when it is a path or URL.
    var fileName: String? {
        guard let value = (descriptionFields[0] ?? descriptionFields[1])?.value, value.contains("/") else { return nil }
        let path = value.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let last = path.split(separator: "/").last, !last.isEmpty else { return nil }
        return String(last)
    }

    /// Bytes while the job gives a total in bytes, else its percent as a fraction; nil while
    /// it has said neither.
    var progress: Progress? {
        if let totalBytes, totalBytes > 0 {
            return .bytes(completed: min(processedBytes ?? 0, totalBytes), total: totalBytes)
        }
        if let percent { return .fraction(Double(min(percent, 100)) / 100) }
        if let processedBytes { return .bytes(completed: processedBytes, total: 0) }
        return nil
    }

    static func == (left: ServedJobState, right: ServedJobState) -> Bool {
        left.title == right.title && left.infoMessage == right.infoMessage
            && left.descriptionFields.mapValues { [$0.name, $0.value] } == right.descriptionFields.mapValues { [$0.name, $0.value] }
            && left.processedBytes == right.processedBytes && left.totalBytes == right.totalBytes
            && left.percent == right.percent && left.speed == right.speed && left.suspended == right.suspended
            && left.error == right.error && left.terminated == right.terminated
    }
}
