internal import CDBus

/// How `requestName` may take and hold a well-known name.
public struct NameRequestOptions: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Let another connection take the name with `.replaceExisting`.
    public static let allowReplacement = NameRequestOptions(rawValue: CDBus_NAME_FLAG_ALLOW_REPLACEMENT)
    /// Take the name from its owner if that owner allowed replacement.
    public static let replaceExisting = NameRequestOptions(rawValue: CDBus_NAME_FLAG_REPLACE_EXISTING)
    /// Fail instead of waiting in the queue.
    public static let doNotQueue = NameRequestOptions(rawValue: CDBus_NAME_FLAG_DO_NOT_QUEUE)
}

/// The bus's answer to `requestName`.
public enum NameRequestReply: Sendable, Equatable {
    case primaryOwner, inQueue, exists, alreadyOwner
}

/// Calls to the message bus itself (`org.freedesktop.DBus`, declared in `BusDriver`) that wait
/// for the answer. They block the calling thread: use them at start-up or from a thread that
/// may wait; `callBus(_:_:reply:)` asks without waiting.
extension Connection {
    /// Asks for a well-known name.
    ///
    /// The corresponding bus method is `RequestName`.
    public func requestName(_ name: BusName, options: NameRequestOptions) throws(BusError) -> NameRequestReply {
        switch Int32(bitPattern: try callBusWaiting(BusDriver.requestName, name.rawValue, options.rawValue)) {
        case CDBus_REQUEST_NAME_REPLY_PRIMARY_OWNER: return .primaryOwner
        case CDBus_REQUEST_NAME_REPLY_IN_QUEUE: return .inQueue
        case CDBus_REQUEST_NAME_REPLY_EXISTS: return .exists
        case CDBus_REQUEST_NAME_REPLY_ALREADY_OWNER: return .alreadyOwner
        default: throw BusError(.failed, "unexpected reply to RequestName")
        }
    }

    /// Gives a well-known name up. Returns whether this connection owned it.
    @discardableResult
    public func releaseName(_ name: BusName) throws(BusError) -> Bool {
        try callBusWaiting(BusDriver.releaseName, name.rawValue) == 1
    }

    /// The unique name that owns `name`, or nil if nobody does.
    public func owner(of name: BusName) throws(BusError) -> BusName? {
        do {
            return BusName(validating: try callBusWaiting(BusDriver.getNameOwner, name.rawValue))
        } catch ErrorName.nameHasNoOwner {
            return nil
        }
    }

    /// The process ID of the connection that owns `name`.
    public func processID(of name: BusName) throws(BusError) -> UInt32 {
        try callBusWaiting(BusDriver.getConnectionUnixProcessID, name.rawValue)
    }

    /// Subscribes to messages that match `rule` (see the D-Bus specification's match rules).
    public func addMatch(_ rule: String) throws(BusError) {
        _ = try callBusWaiting(BusDriver.addMatch, rule)
    }

    /// Drops a subscription added with `addMatch`.
    public func removeMatch(_ rule: String) throws(BusError) {
        _ = try callBusWaiting(BusDriver.removeMatch, rule)
    }
}
