import DBus

/// The names the interface fixes for the service (docs/interface.md), declared once and used by
/// the service, the client library, the command line, the tray, the benchmark and the tests. The
/// members themselves, with their types, are declared in `NetActivityInterface` and
/// `ActivityObjectInterface`.
public enum NetActivityBus {
    /// The well-known bus name.
    public static let name: BusName = "io.github.netactivity.NetActivity1"
    /// The object path of the main object (which is also the activities' ObjectManager).
    public static let path: ObjectPath = "/io/github/netactivity/NetActivity1"
    /// The main interface's name.
    public static let interface: InterfaceName = "io.github.netactivity.NetActivity1"
    /// The interface every activity object implements.
    public static let activityInterface: InterfaceName = "io.github.netactivity.NetActivity1.Activity"
    /// The path below which the activity objects live, one per live tracked activity.
    public static let activitiesPath: ObjectPath = "/io/github/netactivity/NetActivity1/activity"
    /// The service's version, the `Version` property.
    public static let version = "0.3.0"
    /// The contract version the service implements, the `InterfaceVersion` property.
    public static let interfaceVersion: UInt32 = 3

    /// The object path of activity `id`: `…/activity/ID` in decimal.
    public static func activityPath(_ id: UInt32) -> ObjectPath {
        // The prefix and the digits written into one new string: every BeginActivity and
        // EndActivity names its object, so the path takes one string and no generic integer
        // formatting from the standard library (docs/benchmarks.md, "Why the hot path looks the
        // way it does").
        var digitCount = 1
        var rest = id
        while rest >= 10 {
            rest /= 10
            digitCount += 1
        }
        var prefix = activityPathPrefix
        return prefix.withUTF8 { head in
            let end = head.count + digitCount
            let path = String(unsafeUninitializedCapacity: end) { buffer in
                _ = buffer.initialize(fromContentsOf: head)
                var value = id
                for position in stride(from: end - 1, through: head.count, by: -1) {
                    buffer[position] = UInt8(truncatingIfNeeded: 48 + value % 10)
                    value /= 10
                }
                return end
            }
            return ObjectPath(unchecked: path)
        }
    }

    /// `activitiesPath` and the slash before an activity's id.
    private static let activityPathPrefix = activitiesPath.rawValue + "/"

    /// The activity id an object path names, or nil if it is not an activity object's path.
    public static func activityID(at path: String) -> UInt32? {
        guard path.hasPrefix(activityPathPrefix) else { return nil }
        return activityID(named: path.dropFirst(activityPathPrefix.count))
    }

    /// The activity id an activity object's last path element names (`7` for
    /// `…/activity/7`): decimal, without leading zeros; nil for any other name.
    public static func activityID(named name: Substring) -> UInt32? {
        // Read from the bytes by hand, as `activityPath` writes them: a call to an activity
        // object and each of its signals looks its object up by this name.
        guard let first = name.utf8.first, first != 48 else { return nil }
        var id: UInt32 = 0
        for digit in name.utf8 {
            guard digit >= 48, digit <= 57 else { return nil }
            let (tens, overflowed) = id.multipliedReportingOverflow(by: 10)
            let (sum, carried) = tens.addingReportingOverflow(UInt32(digit - 48))
            guard !overflowed, !carried else { return nil }
            id = sum
        }
        return id
    }

    /// The contract's limits.
    public enum Limits {
        /// The shared counter's cap.
        public static let sharedCount: UInt32 = 65_536
        /// The longest label, in UTF-8 bytes.
        public static let labelBytes = 256
        /// Live activities one connection (and, on the system bus, one user id) may have.
        public static let activitiesPerOwner = 1_024
        /// Live activities in all.
        public static let activities = 65_536
    }

    /// The main interface's method names, as `NetActivityInterface` declares them.
    public enum Member {
        public static let push = NetActivityInterface.push.name
        public static let pop = NetActivityInterface.pop.name
        public static let beginActivity = NetActivityInterface.beginActivity.name
        public static let updateActivity = NetActivityInterface.updateActivity.name
        public static let endActivity = NetActivityInterface.endActivity.name
        public static let beginActivityWithHints = NetActivityInterface.beginActivityWithHints.name
        public static let updateActivityFraction = NetActivityInterface.updateActivityFraction.name
    }

    /// The keys of `BeginActivityWithHints`' hints.
    public enum Hint {
        /// `s`: the desktop application id the activity is for.
        public static let application = "application"
        /// `s`: a themed icon name or an absolute path.
        public static let icon = "icon"
        /// `s`: `download`, `upload`, `sync`, `update` or `other`.
        public static let kind = "kind"
        /// The longest `application` or `icon`, in UTF-8 bytes.
        public static let maximumBytes = 255
        /// The kinds an activity may have.
        public static let kinds = ["download", "upload", "sync", "update", "other"]
    }

    /// `ProcessID` and `UserID` before the bus has told the service.
    public static let unknownCredential: UInt32 = 0xFFFF_FFFF
}

extension ErrorName {
    /// `Pop` while the shared counter is 0.
    public static let notActive: ErrorName = "io.github.netactivity.NetActivity1.Error.NotActive"
    /// An activity id that is not live.
    public static let unknownActivity: ErrorName = "io.github.netactivity.NetActivity1.Error.UnknownActivity"
}
