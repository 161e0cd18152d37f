/// Writes a reply's body value by value, for a reply too large to build as one `Value` first
/// (an ObjectManager's `GetManagedObjects` over tens of thousands of objects).
///
/// Values are marshalled by `WireEncoder` rather than through libdbus's type writer, and
/// checked once, all together, when the reply is made: libdbus validates the whole message
/// against the method's output signature, and a reply that fails becomes an error reply.
/// (Checking each value as `Message.append` does would ask libdbus to validate every nested
/// container signature again, for each object.)
public struct ReplyWriter: ~Copyable {
    var body: WireEncoder

    /// A writer that appends to `body`, a message's header or an array's start.
    init(body: WireEncoder) {
        self.body = body
    }

    /// Makes room for a body of about `bytes` bytes, when the caller can tell.
    public mutating func reserveCapacity(_ bytes: Int) {
        body.reserveCapacity(bytes)
    }

    /// Bytes written so far, header included.
    var count: Int { body.count }

    /// Appends one value.
    public mutating func append(_ value: Value) {
        body.append(value)
    }

    /// Appends an array of `element`-typed values that `fill` appends one at a time.
    public mutating func appendArray(
        of element: Signature, _ fill: (inout ReplyWriter) throws(BusError) -> Void
    ) throws(BusError) {
        try body.appendArray(of: element) { (encoder) throws(BusError) in
            var writer = ReplyWriter(body: encoder)
            encoder = WireEncoder()
            defer { encoder = writer.body }
            try fill(&writer)
        }
    }
}
