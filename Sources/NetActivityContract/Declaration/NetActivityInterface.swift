import DBus
import NetActivityModel

/// `io.github.netactivity.NetActivity1` on the main object, declared once: the service binds
/// to these descriptors, clients build calls and decode values through them, and
/// `dbus/io.github.netactivity.NetActivity1.xml` is generated from them (`make interface`).
public enum NetActivityInterface {
    /// The main interface, its members in the order the service exports them.
    public static let descriptor = InterfaceDescriptor(
        NetActivityBus.interface, doc: "",
        methods: [
            push.declaration, pop.declaration, beginActivity.declaration, beginActivityWithHints.declaration,
            updateActivityFraction.declaration, updateActivity.declaration, endActivity.declaration,
        ],
        properties: [
            active.declaration, visible.declaration, count.declaration, progress.declaration, rate.declaration,
            activities.declaration, version.declaration, interfaceVersion.declaration,
        ])

    // MARK: - Methods

    public static let push = MethodDescriptor<NoReply>(
        "Push", of: NetActivityBus.interface,
        doc: """
            adds one to the shared counter.
            Errors: org.freedesktop.DBus.Error.LimitsExceeded when the counter is at its cap (at \
            least 65,536); the counter is unchanged.
            """)

    public static let pop = MethodDescriptor<NoReply>(
        "Pop", of: NetActivityBus.interface,
        doc: """
            takes one from the shared counter.
            Errors: io.github.netactivity.NetActivity1.Error.NotActive when the shared counter is 0; \
            nothing changes.
            """)

    public static let beginActivity = MethodDescriptor<UInt32, String>(
        "BeginActivity", of: NetActivityBus.interface, "label", returning: ["id"],
        doc: """
            starts a tracked activity owned by the caller's connection and returns its id. Ids are \
            never 0 and are not reused while the service runs. The activity ends automatically when \
            the owner leaves the bus.
            label: a short description shown to users, at most 256 bytes.
            Errors: org.freedesktop.DBus.Error.InvalidArgs if label is longer than 256 bytes; \
            org.freedesktop.DBus.Error.LimitsExceeded past 1,024 live activities for one connection, \
            past 65,536 live activities in all, and on the system bus past 1,024 for one user id.
            """)

    public static let beginActivityWithHints = MethodDescriptor<UInt32, String, VariantDictionary>(
        "BeginActivityWithHints", of: NetActivityBus.interface, "label", "hints", returning: ["id"],
        doc: """
            BeginActivity with hints saying what the activity is for. Every key is optional and \
            unknown keys are ignored:
              application (s): the desktop application id it is for, as the caller claims it, at \
            most 255 bytes (a bridge reporting for GNOME Software gives org.gnome.Software);
              icon (s): a themed icon name or an absolute path to an icon, at most 255 bytes;
              kind (s): download, upload, sync, update or other.
            Errors: as BeginActivity; org.freedesktop.DBus.Error.InvalidArgs, naming the key, when a \
            known hint has the wrong type or an invalid value; nothing is begun then.
            """)

    public static let updateActivityFraction = MethodDescriptor<NoReply, UInt32, Double>(
        "UpdateActivityFraction", of: NetActivityBus.interface, "id", "fraction",
        doc: """
            sets the progress of a tracked activity known only as a fraction from 0.0 to 1.0 \
            (fraction mode): its Completed and Total become 0 until a later UpdateActivity reports \
            bytes again.
            Errors: io.github.netactivity.NetActivity1.Error.UnknownActivity; \
            org.freedesktop.DBus.Error.AccessDenied; org.freedesktop.DBus.Error.InvalidArgs for a \
            fraction outside 0.0 to 1.0 or not a number.
            """)

    public static let updateActivity = MethodDescriptor<NoReply, UInt32, UInt64, UInt64>(
        "UpdateActivity", of: NetActivityBus.interface, "id", "completed", "total",
        doc: """
            sets the byte progress of a tracked activity.
            total: 0 means unknown.
            Errors: io.github.netactivity.NetActivity1.Error.UnknownActivity if no live activity has \
            this id; org.freedesktop.DBus.Error.AccessDenied if the caller does not own it; \
            org.freedesktop.DBus.Error.InvalidArgs if total > 0 and completed > total.
            """)

    public static let endActivity = MethodDescriptor<NoReply, UInt32>(
        "EndActivity", of: NetActivityBus.interface, "id",
        doc: """
            ends a tracked activity.
            Errors: io.github.netactivity.NetActivity1.Error.UnknownActivity if no live activity has \
            this id; org.freedesktop.DBus.Error.AccessDenied if the caller does not own it.
            """)

    // MARK: - Properties

    public static let active = PropertyDescriptor<Bool>(
        "Active", doc: "Count > 0. Signalled on every transition, immediately.")

    public static let visible = PropertyDescriptor<Bool>(
        "Visible",
        doc: """
            the debounced indicator state a panel should show. Becomes true only after Active has \
            stayed true for the activation delay (default 1.0 s), false only after Active has stayed \
            false for the completion delay (default 0.17 s). Signalled on every transition, \
            immediately.
            """)

    public static let count = PropertyDescriptor<UInt32>(
        "Count", doc: "shared counter + live tracked activities. Throttled.")

    public static let progress = PropertyDescriptor<Double>(
        "Progress",
        doc: """
            how far the live activities are, 0.0 to 1.0; -1.0 when none knows. Byte activities \
            (Total > 0) weigh by their Total, each activity in fraction mode as much as the mean \
            Total of the byte activities (1 when there are none): (sum of Completed + W * sum of \
            Fraction) / (sum of Total + W * fraction-mode activities). Without fraction-mode \
            activities, sum of Completed / sum of Total. Throttled.
            """)

    public static let rate = PropertyDescriptor<Double>(
        "Rate", doc: "the sum of the live activities' Rate, in bytes per second. Throttled.")

    public static let activities = PropertyDescriptor<[ActivityEntry]>(
        "Activities", changes: .invalidates,
        doc: """
            live tracked activities sorted by id, each (id, owner unique bus name, label, completed \
            bytes, total bytes, started in microseconds since the Unix epoch). Throttled, and \
            announced by invalidation only: follow the activity objects instead of re-reading it.
            """)

    public static let version = PropertyDescriptor<String>(
        "Version", changes: .constant, doc: "the service's version. Never changes while the service runs.")

    public static let interfaceVersion = PropertyDescriptor<UInt32>(
        "InterfaceVersion", changes: .constant,
        doc: "the version of this interface the service implements, 3.")
}

/// `io.github.netactivity.NetActivity1.Activity`, on every activity object, declared once.
public enum ActivityObjectInterface {
    /// The activity interface, its properties in the order the service exports them.
    public static let descriptor = InterfaceDescriptor(
        NetActivityBus.activityInterface,
        doc: """
            One live tracked activity, at /io/github/netactivity/NetActivity1/activity/ID. All \
            properties are read-only. A call on a path under .../activity/ that names no live \
            activity gets org.freedesktop.DBus.Error.UnknownObject. PropertiesChanged on an activity \
            object is never sent before its InterfacesAdded or after its InterfacesRemoved.
            """,
        properties: properties.map(\.declaration))

    /// Every property, in the order the service exports them, each with where its value lives:
    /// a property the model's `Activity` holds is bound here to its key path, and the service's
    /// getter, the client's field and `status --json` follow (docs/architecture.md).
    public static let properties: [ActivityProperty] = [
        id.held(\.id), label.held(\.label), owner.held(\.owner), started.held(\.started),
        completed.held(\.completed), total.held(\.total),
        processID.attribution, userID.attribution, application.attribution,
        claimedApplication.held(\.hints.application), icon.held(\.hints.icon), kind.held(\.kindName),
        fraction.held(computed: \.fraction), rate.held(\.rate),
    ]

    public static let id = PropertyDescriptor<UInt32>(
        "Id", changes: .constant, doc: "the id BeginActivity returned.")
    public static let label = PropertyDescriptor<String>(
        "Label", changes: .constant, doc: "the label given to BeginActivity.")
    public static let owner = PropertyDescriptor<String>(
        "Owner", changes: .constant, doc: "the unique bus name of the connection that began it.")
    public static let started = PropertyDescriptor<UInt64>(
        "Started", changes: .constant, doc: "when it began, in microseconds since the Unix epoch.")
    public static let completed = PropertyDescriptor<UInt64>(
        "Completed",
        doc: """
            bytes done, as last updated; 0 in fraction mode. Completed, Total, Fraction and Rate \
            are one signal: whichever changed go out together, throttled per object.
            """)
    public static let total = PropertyDescriptor<UInt64>(
        "Total",
        doc: "bytes expected, as last updated; 0 means unknown (and in fraction mode). Announced with Completed.")
    public static let processID = PropertyDescriptor<UInt32>(
        "ProcessID",
        doc: """
            the owner's process id as the bus reports it; 4294967295 (0xFFFFFFFF) until known, \
            announced once when learned.
            """)
    public static let userID = PropertyDescriptor<UInt32>(
        "UserID",
        doc: """
            the owner's user id as the bus reports it; 4294967295 (0xFFFFFFFF) until known, \
            announced once when learned.
            """)
    public static let application = PropertyDescriptor<String>(
        "Application",
        doc: """
            the owner's application, best effort: its Flatpak app id, else the app id of its systemd \
            app-...scope or service, else its executable's name. Empty until known, announced once \
            when learned.
            """)
    public static let claimedApplication = PropertyDescriptor<String>(
        "ClaimedApplication", changes: .constant,
        doc: """
            the application hint given to BeginActivityWithHints, empty without one. It never \
            replaces Application, which comes from the bus's credentials.
            """)
    public static let icon = PropertyDescriptor<String>(
        "Icon", changes: .constant, doc: "the icon hint, or empty.")
    public static let kind = PropertyDescriptor<String>(
        "Kind", changes: .constant, doc: "the kind hint: download, upload, sync, update, or other without one.")
    public static let fraction = PropertyDescriptor<Double>(
        "Fraction",
        doc: """
            how far along, 0.0 to 1.0: Completed / Total while Total > 0, the last \
            UpdateActivityFraction in fraction mode, -1.0 when unknown. Announced with Completed.
            """)
    public static let rate = PropertyDescriptor<Double>(
        "Rate",
        doc: """
            bytes per second: the bytes moved since a checkpoint 1.5 to 3 s old over the time since \
            it. 0.0 in fraction mode, before two byte updates, and once no bytes have moved for 5 s \
            (it falls to 0.0 between 5 and 6 s after the last update that moved bytes, and that fall \
            is announced). Announced with Completed.
            """)

    /// An activity's progress, which goes out as one signal (contract version 3): every
    /// property the activity holds that can change (Completed, Total, Fraction, Rate), so a
    /// new one is announced with them.
    public static let progressNames = properties.filter { $0.isHeld && $0.declaration.changes != .constant }
        .map(\.declaration.name)
    /// What the service learns of an owner once the bus has told it.
    public static let attributionNames = [processID.name, userID.name, application.name]
}

/// One entry of `Activities`, `(ussttt)`: a live tracked activity as the main object lists it.
public struct ActivityEntry: DBusRepresentable, Equatable {
    public static let signature: Signature = "(ussttt)"
    public var id: UInt32
    /// The owner's unique bus name.
    public var owner: String
    public var label: String
    public var completed: UInt64
    public var total: UInt64
    /// Microseconds since the Unix epoch.
    public var started: UInt64

    /// The entry that lists `activity`.
    public init(_ activity: Activity) {
        id = activity.id
        owner = activity.owner
        label = activity.label
        completed = activity.completed
        total = activity.total
        started = activity.started
    }

    /// Decodes one `(ussttt)` struct; nil if it has another shape.
    public init?(_ value: Value) {
        guard case .structure(let fields) = value, fields.count == 6,
            let id = UInt32(fields[0]), let owner = String(fields[1]), let label = String(fields[2]),
            let completed = UInt64(fields[3]), let total = UInt64(fields[4]), let started = UInt64(fields[5])
        else { return nil }
        self.init(Activity(id: id, owner: owner, label: label, completed: completed, total: total, started: started))
    }

    public var value: Value {
        .structure([.uint32(id), .string(owner), .string(label), .uint64(completed), .uint64(total), .uint64(started)])
    }
}
