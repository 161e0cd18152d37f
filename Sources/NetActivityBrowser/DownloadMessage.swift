/// One message from the extension: one download's state, in the terms of the WebExtensions
/// `downloads.DownloadItem` it was read from.
///
///     {"id": 7, "state": "in_progress", "filename": "report.pdf", "bytesReceived": 1024,
///      "totalBytes": 4096, "paused": false, "incognito": false}
///
/// Only `id` and `state` are required. A message that is not UTF-8, not a JSON object, or whose
/// fields have the wrong types is refused whole; fields it does not know are ignored and named
/// in `unknownFields`, so a newer extension works with this host.
public struct DownloadMessage: Equatable, Sendable {
    /// Where the download is.
    public enum State: String, Sendable, CaseIterable {
        /// Downloading, or paused.
        case inProgress = "in_progress"
        case complete
        /// Failed or cancelled (Chromium may resume it: it is then in progress again).
        case interrupted
        /// Erased from the browser's list.
        case removed
    }

    /// The browser's id for the download, unique for the browser's session.
    public var id: Int64
    public var state: State
    /// The file's base name; empty while the browser has not named it yet, and in a private window.
    public var filename: String
    public var bytesReceived: UInt64
    /// The file's size; 0 when unknown (Chromium says 0, Firefox -1).
    public var totalBytes: UInt64
    public var paused: Bool
    /// Whether it is a private window's download, whose name the host never shows.
    public var incognito: Bool
    /// The fields the message had that this host does not know, sorted.
    public var unknownFields: [String] = []

    public init(
        id: Int64, state: State, filename: String = "", bytesReceived: UInt64 = 0, totalBytes: UInt64 = 0,
        paused: Bool = false, incognito: Bool = false
    ) {
        self.id = id
        self.state = state
        self.filename = filename
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.paused = paused
        self.incognito = incognito
    }

    /// Why a message was refused.
    public enum Refusal: Error, Equatable, Sendable {
        case notUTF8
        /// Not JSON, not an object, or a field of the wrong type; says what.
        case malformed(String)
    }

    static let knownFields: Set<String> = ["id", "state", "filename", "bytesReceived", "totalBytes", "paused", "incognito"]

    /// Decodes a message's bytes.
    public static func decode(_ bytes: [UInt8]) -> Result<DownloadMessage, Refusal> {
        guard String(validating: bytes, as: UTF8.self) != nil else { return .failure(.notUTF8) }
        let fields: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONValue.parse(bytes) else {
                return .failure(.malformed("not a JSON object"))
            }
            fields = object
        } catch {
            return .failure(.malformed("not JSON"))
        }
        guard let idValue = fields["id"] else { return .failure(.malformed("no id")) }
        guard case .number(let id) = idValue else { return .failure(.malformed("id has the wrong type")) }
        guard let stateValue = fields["state"] else { return .failure(.malformed("no state")) }
        guard case .string(let stateName) = stateValue else { return .failure(.malformed("state has the wrong type")) }
        guard let state = State(rawValue: stateName) else { return .failure(.malformed("unknown state")) }
        guard id >= 0 else { return .failure(.malformed("id is negative")) }
        // Browsers count their downloads from 0 or 1; JSON numbers are exact to 2^53.
        guard id == id.rounded(.towardZero), id <= 9_007_199_254_740_992 else {
            return .failure(.malformed("id is not a whole number"))
        }
        var message = DownloadMessage(id: Int64(id), state: state)
        for (name, value) in fields {
            switch (name, value) {
            case ("id", _), ("state", _): continue
            case ("filename", .string(let filename)): message.filename = filename
            case ("bytesReceived", .number(let count)): message.bytesReceived = byteCount(count)
            case ("totalBytes", .number(let count)): message.totalBytes = byteCount(count)
            case ("paused", .bool(let paused)): message.paused = paused
            case ("incognito", .bool(let incognito)): message.incognito = incognito
            case (_, .null) where knownFields.contains(name): continue
            case _ where knownFields.contains(name): return .failure(.malformed("\(name) has the wrong type"))
            default: message.unknownFields.append(name)
            }
        }
        message.unknownFields.sort()
        return .success(message)
    }

    /// A byte count as browsers write it (a JSON number, -1 or 0 for unknown), as the service
    /// takes it: 0 for unknown, negative or too large to be a number; whole bytes; at most
    /// `UInt64.max`.
    static func byteCount(_ number: Double) -> UInt64 {
        guard number.isFinite, number > 0 else { return 0 }
        guard number < 18_446_744_073_709_551_616 else { return UInt64.max }
        return UInt64(number)
    }
}
