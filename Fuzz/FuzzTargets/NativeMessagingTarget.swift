import NetActivityBrowser

extension FuzzTarget {
    /// What the browser writes to its native messaging host: the stream framed as
    /// `BrowserHost.receive` frames it, each message decoded as a download. The stream comes
    /// whole to one framer and a byte at a time to another, which must find the same frames.
    public static let nativeMessaging = FuzzTarget("native-messaging") { bytes in
        var whole = NativeMessageFramer()
        let frames = whole.append(bytes)
        var piecewise = NativeMessageFramer()
        var pieces: [NativeMessageFramer.Frame] = []
        for byte in bytes { pieces += piecewise.append(CollectionOfOne(byte)) }
        precondition(frames == pieces, "the framer's frames depend on how the stream is cut")
        precondition(whole.isInsideMessage == piecewise.isInsideMessage)
        for case .message(let message) in frames {
            _ = DownloadMessage.decode(message)
        }
    }
}
