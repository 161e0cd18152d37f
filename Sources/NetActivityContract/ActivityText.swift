extension ActivityInfo {
    /// The owner's application as people read it, or nil while unknown: a reverse-DNS app id
    /// (`org.mozilla.firefox`) shortened to its last part, and the first letter capitalised
    /// ("Firefox"); an executable's name the same way ("Curl").
    public var applicationName: String? {
        let short = application.split(separator: ".").last.map(String.init) ?? application
        guard let first = short.first else { return nil }
        return first.uppercased() + short.dropFirst()
    }

    /// The line panels show for it: "Firefox — Sync feeds", with "system: " before an activity
    /// of the system service and without the application while it is unknown.
    public var title: String {
        (bus == .system ? "system: " : "") + (applicationName.map { $0 + " — " } ?? "") + label
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
    /// The text with `&`, `<` and `>` escaped and control characters as spaces, for hosts
    /// that read it as Pango or HTML-like markup (waybar's text and tooltip, a tray item's
    /// tooltip): labels come from other processes and must show as written.
    public var markupEscaped: String {
        var escaped = ""
        escaped.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case let control where control.value < 0x20 || control.value == 0x7F: escaped += " "
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
