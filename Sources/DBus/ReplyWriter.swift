/// Writes a reply's body value by value, for a reply too large to build as one `Value` first
/// (an ObjectManager's `GetManagedObjects` over tens of thousands of objects).
///
/// Each value is checked before libdbus sees it, as `Message.append` does.
public struct ReplyWriter: ~Copyable {
    private var body: BodyWriter

    init(body: BodyWriter) {
        self.body = body
    }

    /// Appends one value.
    public mutating func append(_ value: Value) throws(BusError) {
        // A dictionary entry is no complete type on its own: its key and value are checked.
        if case .dictEntry(let key, let entryValue) = value {
            try key.validateForEncoding()
            try entryValue.validateForEncoding()
        } else {
            try value.validateForEncoding()
        }
        try body.append(value)
    }

    /// Appends an array of `element`-typed values that `fill` appends one at a time.
    public mutating func appendArray(
        of element: Signature, _ fill: (inout ReplyWriter) throws(BusError) -> Void
    ) throws(BusError) {
        try body.appendArray(of: element) { (sub) throws(BusError) in
            var writer = ReplyWriter(body: sub)
            try fill(&writer)
            sub = writer.body
        }
    }
}
