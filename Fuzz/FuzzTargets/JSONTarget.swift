import NetActivityBrowser

extension FuzzTarget {
    /// The browser host's JSON parser, on one message's bytes.
    public static let json = FuzzTarget("json") { bytes in
        _ = try? JSONValue.parse(bytes)
    }
}
