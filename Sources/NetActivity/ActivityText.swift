import DBus
import DesktopApplications

extension ActivityInfo {
    /// The application as people read it, or nil while unknown: the one the activity is for
    /// (`claimedApplication`) where it names one, by its desktop entry's name where one is
    /// installed; else the owner's. A reverse-DNS app id (`org.mozilla.firefox`) without a
    /// desktop entry is shortened to its last part, the first letter capitalised ("Firefox");
    /// an executable's name the same way ("Curl"). Desktop entries are looked for in `entries`.
    public func applicationName(in entries: DesktopEntries = .installed) -> String? {
        if !claimedApplication.isEmpty, let name = entries.name(of: claimedApplication) { return name }
        let id = claimedApplication.isEmpty ? application : claimedApplication
        let short = id.split(separator: ".").last.map(String.init) ?? id
        guard let first = short.first else { return nil }
        return first.uppercased() + short.dropFirst()
    }

    /// The line panels show for it: "Firefox — Sync feeds", with "system: " before an activity
    /// of the system service and without the application while it is unknown. Printable
    /// (`PrintableText`): the label and the application's name come from other programs.
    public var title: String { title(in: .installed) }

    /// `title`, with the application's name from the desktop entries in `entries`.
    public func title(in entries: DesktopEntries) -> String {
        PrintableText.printable((bus == .system ? "system: " : "") + (applicationName(in: entries).map { $0 + " — " } ?? "") + activity.label)
    }
}

extension IndicatorSnapshot {
    /// How many activities a tooltip lists before "… and N more": with tens of thousands live,
    /// a tooltip of every one would be megabytes, rebuilt on every change.
    public static let tooltipActivityLimit = 10

    /// The line that stands for the activities a tooltip leaves out, or nil when none is.
    public var moreActivitiesLine: String? {
        let more = activities.count - Self.tooltipActivityLimit
        return more > 0 ? "… and \(more) more" : nil
    }
}

extension String {
    /// The text printable (`PrintableText`) and with `&`, `<` and `>` escaped, for hosts that
    /// read it as Pango or HTML-like markup (waybar's text and tooltip, a tray item's tooltip):
    /// labels come from other processes and must show as written.
    public var markupEscaped: String {
        XMLText.escaped(PrintableText.printable(self))
    }
}

/// How transfers read in every panel, the command line's and the tray's alike.
public enum TransferText {
    /// One activity's line in a tooltip, escaped for markup: "GNOME Software — Downloading
    /// updates — 45% — 2.3 MB/s, 1 min left", each part only where known.
    public static func markupLine(_ activity: ActivityInfo) -> String {
        var parts = [activity.title.markupEscaped]
        if let fraction = activity.fraction { parts.append(percent(fraction)) }
        var speed: [String] = []
        if activity.rate > 0 { speed.append(rate(activity.rate)) }
        if let remaining = activity.remainingSeconds { speed.append(remainingWords(remaining)) }
        if !speed.isEmpty { parts.append(speed.joined(separator: ", ")) }
        return parts.joined(separator: " — ")
    }

    /// A whole percent, rounded down: 100% only when complete.
    public static func percent(_ fraction: Double) -> String {
        "\(wholePercent(fraction))%"
    }

    public static func wholePercent(_ fraction: Double) -> Int {
        Int((min(1, max(0, fraction.isNaN ? 0 : fraction)) * 100).rounded(.down))
    }

    /// SI units, as GNOME shows sizes: 1 kB = 1,000 bytes, 1 MB = 10⁶. Three significant
    /// figures at most: "512 B", "1.5 kB", "23.4 MB", "234 MB".
    public static func bytes(_ count: UInt64) -> String {
        scaled(Double(count), unit: "B")
    }

    /// A rate in SI units per second: "2.3 MB/s".
    public static func rate(_ bytesPerSecond: Double) -> String {
        scaled(bytesPerSecond, unit: "B") + "/s"
    }

    private static func scaled(_ value: Double, unit: String) -> String {
        let prefixes = ["", "k", "M", "G", "T", "P"]
        var value = value.isFinite ? max(0, value) : 0
        var prefix = 0
        while value >= 999.5, prefix < prefixes.count - 1 {
            value /= 1000
            prefix += 1
        }
        if prefix == 0 { return "\(Int(value.rounded())) \(unit)" }
        let text = value < 99.95 ? String((value * 10).rounded() / 10) : String(Int(value.rounded()))
        return text + " " + prefixes[prefix] + unit
    }

    /// Time left as a clock: "0:45", "1:20", "1:02:03".
    public static func clock(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(min(max(0, seconds.rounded(.up)), 359_999)) : 359_999
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// Time left in words: "45 s left", "1 min left", "2 h 5 min left".
    public static func remainingWords(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? Int(min(max(0, seconds.rounded(.up)), 359_999)) : 359_999
        if whole < 60 { return "\(whole) s left" }
        if whole < 3600 { return "\(whole / 60) min left" }
        return "\(whole / 3600) h \(whole / 60 % 60) min left"
    }

}
