import DBus
import NetActivity

/// What the bridge knows of one PackageKit transaction, from its properties, and what the
/// indicator should show for it: pure, no bus, so every rule here tests in microseconds.
///
/// Everything comes from another process, so each property is taken only with its documented
/// type and a sane value; anything else leaves the last good value in place.
struct PackageKitTransaction: Equatable {
    /// PackageKit's `PkRoleEnum`: what the transaction was asked to do.
    private(set) var role: UInt32?
    /// PackageKit's `PkStatusEnum`: what it is doing now.
    private(set) var status: UInt32?
    /// The unique bus name of the program that asked for it.
    private(set) var sender: BusName?
    /// The last `Percentage` (0–100) heard while in a network state; nil when unknown (101) or
    /// only heard before: PackageKit reads 100 while the cache loads, before any byte moves.
    private(set) var percentage: UInt32?
    /// The largest `DownloadSizeRemaining` seen: the transfer's total.
    private(set) var largestRemaining: UInt64 = 0
    /// The last `DownloadSizeRemaining`.
    private(set) var remaining: UInt64 = 0

    /// A byte count past this (1 PiB) is no download size but a bogus or sentinel value.
    static let largestPlausibleBytes: UInt64 = 1 << 50

    /// Applies a property map (`GetAll`'s reply or `PropertiesChanged`'s changed values).
    /// `Status` is taken before `Percentage`, so a percentage that comes with the change into
    /// a network state counts. Returns whether anything changed.
    @discardableResult
    mutating func apply(_ properties: [String: Value]) -> Bool {
        let before = self
        if let value = properties["Role"]?.unwrapped?.uint32, value < 64 { role = value }
        if let value = properties["Status"]?.unwrapped?.uint32, value < 256 {
            status = value
            if !Self.isNetwork(value) { percentage = nil }
        }
        if let text = properties["Sender"]?.unwrapped?.string, text.utf8.count <= 255,
            let name = BusName(validating: text), name.isUnique
        {
            sender = name
        }
        if let value = properties["Percentage"]?.unwrapped?.uint32, Self.isNetwork(status) {
            percentage = value <= 100 ? value : nil
        }
        if let value = properties["DownloadSizeRemaining"]?.unwrapped?.uint64, value <= Self.largestPlausibleBytes {
            remaining = value
            largestRemaining = max(largestRemaining, value)
        }
        return self != before
    }

    /// Whether the transaction moves data over the network now: refreshing the cache (7),
    /// downloading (8), or downloading repository data (20–25).
    var isDownloading: Bool { Self.isNetwork(status) }

    static func isNetwork(_ status: UInt32?) -> Bool {
        guard let status else { return false }
        return status == 7 || status == 8 || (20...25).contains(status)
    }

    /// Progress as the indicator gets it: bytes once `DownloadSizeRemaining` has given a size,
    /// else the percentage as a fraction, else nothing known.
    var progress: Progress {
        if largestRemaining > 0 {
            return .bytes(completed: largestRemaining - min(remaining, largestRemaining), total: largestRemaining)
        }
        if let percentage { return .fraction(Double(percentage) / 100) }
        return .unknown
    }

    enum Progress: Equatable {
        case bytes(completed: UInt64, total: UInt64)
        case fraction(Double)
        case unknown
    }

    /// The activity's label and kind, from what the transaction was asked to do and, for roles
    /// that say nothing of the network, what it is doing.
    var work: (label: String, kind: ActivityHints.Kind) {
        switch role {
        case 13: return ("Refreshing package lists", .update)
        case 22: return ("Downloading updates", .update)
        case 33: return ("Downloading a system upgrade", .update)
        case 26: return ("Checking for system upgrades", .update)
        case 9: return ("Checking for updates", .update)
        case 10, 11, 25: return ("Downloading packages", .download)
        case 29: return ("Repairing packages", .download)
        default:
            switch status {
            case 7: return ("Refreshing package lists", .update)
            case 8: return ("Downloading packages", .download)
            default: return ("Downloading package information", .update)
            }
        }
    }
}
