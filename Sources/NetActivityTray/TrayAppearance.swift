import NetActivity
import NetActivityContract

/// What the item shows for one indicator state: status, icon and tooltip. Pure, so the rules
/// (follow `Visible`, list activities with their percent) test without a bus.
public struct TrayAppearance: Equatable, Sendable {
    /// The item's `Status` property.
    public enum Status: String, Sendable {
        /// Idle: hosts may hide the item.
        case passive = "Passive"
        /// Network activity is going on.
        case active = "Active"
    }

    /// The `ToolTip` property's text parts. Its icon is left empty: hosts show the item's own.
    public struct ToolTip: Equatable, Sendable {
        public var title: String
        /// One line per activity; hosts may read it as a small HTML subset, so labels are escaped.
        public var description: String

        /// A tooltip with a title and a description.
        public init(title: String, description: String) {
            self.title = title
            self.description = description
        }
    }

    /// The item's title, which never changes.
    public static let title = "Network activity"

    /// `Active` while the indicator is visible, `Passive` otherwise.
    public var status: Status
    /// The themed icon name (or icon path) shown when no ring is drawn.
    public var themeIcon: String
    /// The whole percent the drawn ring shows, nil for the theme icon.
    public var ring: Int?
    /// The `ToolTip` text.
    public var toolTip: ToolTip

    /// The `IconName` property: empty while the ring is drawn, since hosts prefer a name to
    /// the pixmaps.
    public var iconName: String { ring == nil ? themeIcon : "" }

    /// The appearance for `state`: `Active` with the activity icon while `Visible`, `Passive`
    /// with the idle icon otherwise; the tooltip lists live activities whatever `Visible` says.
    /// While `Active` with a known overall progress, and `options.progressRing`, a ring drawn
    /// to the whole percent (rounded down) takes the activity icon's place.
    public init(_ state: IndicatorSnapshot, options: TrayOptions) {
        let shown = state.visible && state.serviceAvailable
        status = shown ? .active : .passive
        themeIcon = shown ? options.activeIcon : options.idleIcon
        ring = shown && options.progressRing ? state.progress.map(Self.wholePercent) : nil
        toolTip = ToolTip(title: Self.title, description: Self.describe(state))
    }

    /// What changed from `self` to `next`, as the specification's change signals.
    public func changes(to next: TrayAppearance) -> [Change] {
        var changes: [Change] = []
        if next.status != status { changes.append(.status(next.status)) }
        if next.iconName != iconName || next.ring != ring { changes.append(.icon) }
        if next.toolTip != toolTip { changes.append(.toolTip) }
        return changes
    }

    /// One announced change: `NewStatus`, `NewIcon` or `NewToolTip`.
    public enum Change: Equatable, Sendable {
        case status(Status)
        case icon
        case toolTip
    }

    // MARK: - The tooltip's text

    static func describe(_ state: IndicatorSnapshot) -> String {
        guard state.serviceAvailable else { return "The network activity service is not running" }
        guard state.active else { return "Idle" }
        var lines = state.activities.prefix(IndicatorSnapshot.tooltipActivityLimit).map(TransferText.markupLine)
        if let more = state.moreActivitiesLine { lines.append(more) }
        let shared = Int(state.count) - state.activities.count
        if shared > 0 { lines.append("\(shared) other connection" + (shared == 1 ? "" : "s")) }
        // Overall progress says something new only when it sums up several known totals.
        if let progress = state.progress, state.activities.count(where: { $0.fraction != nil }) > 1 {
            var overall = "Overall " + percent(progress)
            if state.rate > 0 { overall += " — " + TransferText.rate(state.rate) }
            if let remaining = state.remainingSeconds { overall += ", " + TransferText.remainingWords(remaining) }
            lines.append(overall)
        }
        return lines.joined(separator: "\n")
    }

    static func percent(_ fraction: Double) -> String {
        TransferText.percent(fraction)
    }

    /// `fraction` of 0...1 as a whole percent, rounded down: 100 only when complete.
    static func wholePercent(_ fraction: Double) -> Int {
        TransferText.wholePercent(fraction)
    }

}
