import DBus

/// The names the interface fixes for the service (docs/interface.md), declared once and used by
/// the service, the client library, the command line, the tray, the benchmark and the tests.
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
        ObjectPath(unchecked: activitiesPath.rawValue + "/" + String(id))
    }

    /// The activity id an object path names, or nil if it is not an activity object's path.
    public static func activityID(at path: String) -> UInt32? {
        let prefix = activitiesPath.rawValue + "/"
        guard path.hasPrefix(prefix) else { return nil }
        return activityID(named: path.dropFirst(prefix.count))
    }

    /// The activity id an activity object's last path element names (`7` for
    /// `…/activity/7`): decimal, without leading zeros; nil for any other name.
    public static func activityID(named name: Substring) -> UInt32? {
        let digits = name.utf8
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            digits.first != 48, let id = UInt32(name)
        else { return nil }
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

    /// The main interface's members.
    public enum Member {
        public static let push: MemberName = "Push"
        public static let pop: MemberName = "Pop"
        public static let beginActivity: MemberName = "BeginActivity"
        public static let updateActivity: MemberName = "UpdateActivity"
        public static let endActivity: MemberName = "EndActivity"
        public static let beginActivityWithHints: MemberName = "BeginActivityWithHints"
        public static let updateActivityFraction: MemberName = "UpdateActivityFraction"
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

    /// The main interface's properties.
    public enum Property {
        public static let active: MemberName = "Active"
        public static let visible: MemberName = "Visible"
        public static let count: MemberName = "Count"
        public static let progress: MemberName = "Progress"
        public static let activities: MemberName = "Activities"
        public static let version: MemberName = "Version"
        public static let rate: MemberName = "Rate"
        public static let interfaceVersion: MemberName = "InterfaceVersion"
    }

    /// The activity interface's properties.
    public enum ActivityProperty {
        public static let id: MemberName = "Id"
        public static let label: MemberName = "Label"
        public static let owner: MemberName = "Owner"
        public static let started: MemberName = "Started"
        public static let completed: MemberName = "Completed"
        public static let total: MemberName = "Total"
        public static let processID: MemberName = "ProcessID"
        public static let userID: MemberName = "UserID"
        public static let application: MemberName = "Application"
        public static let claimedApplication: MemberName = "ClaimedApplication"
        public static let icon: MemberName = "Icon"
        public static let kind: MemberName = "Kind"
        public static let fraction: MemberName = "Fraction"
        public static let rate: MemberName = "Rate"
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
