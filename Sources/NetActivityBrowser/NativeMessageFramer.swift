/// Splits the byte stream a browser writes to its native messaging host into messages: each is
/// a 32-bit length in the machine's byte order, then that many bytes of UTF-8 JSON.
///
/// Bytes arrive in whatever pieces `read` returns: a message split over many, or many messages
/// in one. Memory stays bounded whatever the browser sends: a message longer than
/// `maximumMessageBytes` is never buffered but skipped as it arrives, and reported once, as an
/// `.oversize` frame, the moment its length is read.
public struct NativeMessageFramer: Sendable {
    /// What the stream holds next.
    public enum Frame: Equatable, Sendable {
        /// A whole message's bytes (not yet checked to be UTF-8 or JSON).
        case message([UInt8])
        /// A message of this many bytes, more than `maximumMessageBytes`: skipped.
        case oversize(UInt32)
    }

    /// The longest message kept: 1 MiB, as Chromium's limit on what a host may send back.
    public static let maximumMessageBytes = 1 << 20

    private var header: [UInt8] = []
    /// The length of the message being read, once its header is complete.
    private var expected: Int?
    private var pending: [UInt8] = []
    /// Bytes of an oversize message still to be skipped.
    private var skipping = 0

    public init() {}

    /// The frames `bytes` completes, in order; a partial one waits for the next call.
    public mutating func append<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [Frame] {
        var frames: [Frame] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            if skipping > 0 {
                let count = min(skipping, rest.count)
                rest = rest.dropFirst(count)
                skipping -= count
            } else if let length = expected {
                let count = min(length - pending.count, rest.count)
                pending.append(contentsOf: rest.prefix(count))
                rest = rest.dropFirst(count)
                if pending.count == length {
                    frames.append(.message(pending))
                    pending = []
                    expected = nil
                }
            } else {
                let count = min(4 - header.count, rest.count)
                header.append(contentsOf: rest.prefix(count))
                rest = rest.dropFirst(count)
                guard header.count == 4 else { continue }
                let length = header.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
                header = []
                if Int(length) > Self.maximumMessageBytes {
                    frames.append(.oversize(length))
                    skipping = Int(length)
                } else if length == 0 {
                    frames.append(.message([]))
                } else {
                    expected = Int(length)
                    pending.reserveCapacity(Int(length))
                }
            }
        }
        return frames
    }

    /// Whether the stream stopped inside a message (its header or its bytes): at the end of
    /// input, a browser that died mid-write.
    public var isInsideMessage: Bool {
        !header.isEmpty || expected != nil || skipping > 0
    }

    /// `message` framed as a browser frames it: its length in the machine's byte order, then
    /// its bytes. For tests and for replies.
    public static func frame(_ message: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: message.count)) { Array($0) } + message
    }
}
