/// Follows who owns one well-known name on a connection: subscribes to its changes first, then
/// asks the bus (`GetNameOwner`, without waiting), then hands `changed` the answer and every
/// change after it, in order, on the connection's loop. An answer a change has overtaken is
/// dropped, so a stale owner never replaces a newer one.
///
/// The connection's filter hands the follower every signal (`handle(_:)`). Confined to the
/// connection's loop, like the filter.
public final class NameOwnerFollower {
    /// The name followed.
    public let name: BusName
    /// Its owner as last learned; nil for none, or before the bus has answered.
    public private(set) var owner: BusName?
    private let changed: (BusName?) -> Void
    /// Whether a change has arrived: the first answer, if later, is older than it.
    private var changeHeard = false

    /// Starts following `name` on `connection`; `changed` gets the first answer (nil when the
    /// name has no owner) and then each change.
    ///
    /// - Throws: `BusError` if the bus refuses the subscription.
    public init(_ name: BusName, on connection: Connection, changed: @escaping (BusName?) -> Void) throws(BusError) {
        self.name = name
        self.changed = changed
        try connection.addMatch(NameOwnerChange.matchRule(for: name))
        connection.callBus(BusDriver.getNameOwner, name.rawValue) { [weak self] result in
            guard let self, !changeHeard else { return }
            if case .success(let text) = result, let owner = BusName(validating: text), owner.isUnique {
                learn(owner)
            } else {
                // No owner (NameHasNoOwner), or an answer of another shape: none, as far as known.
                changeHeard = true
                changed(nil)
            }
        }
    }

    /// Follows `message` if it is the bus's `NameOwnerChanged` for the name; whether it was.
    @discardableResult
    public func handle(_ message: Message) -> Bool {
        guard let change = NameOwnerChange(message), change.name == name else { return false }
        learn(change.newOwner)
        return true
    }

    private func learn(_ owner: BusName?) {
        let first = !changeHeard
        changeHeard = true
        guard first || owner != self.owner else { return }
        self.owner = owner
        changed(owner)
    }
}
