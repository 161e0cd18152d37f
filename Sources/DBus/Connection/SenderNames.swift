/// The caller's unique name of the last call that asked for it, so a client making call after
/// call gets the same `String` back instead of a new one each time.
final class SenderNames {
    // Read and set for every call that asks for its sender, by the dispatching thread alone.
    private var last = (raw: CName(""), name: "")

    /// `raw` as a `String`; nil (a peer-to-peer call) is "".
    func name(_ raw: UnsafePointer<CChar>?) -> String {
        guard let raw else { return "" }
        if !last.raw.matches(raw) { last = (CName(raw), String(cString: raw)) }
        return last.name
    }
}
