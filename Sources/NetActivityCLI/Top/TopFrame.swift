import NetActivity
import NetActivityContract

/// One screen of `netactivity top`, made from a state, the rate history and the terminal's
/// size alone: no terminal, bus or clock, so every layout is a unit test.
///
///     Network activity: 2 — 44% — 2.3 MB/s, 7 s left
///     last minute                      ▁▂▃▅▆▇▇█▇▆▆▇ peak 2.6 MB/s
///
///     ACTIVITY                  KIND           RATE     MOVED  DONE      LEFT
///     Chromium — report.pdf     download   2.3 MB/s   12.0 MB   44%      0:07
///     Netactivity — rsync …     sync
///
/// The summary, the sparkline (a column a second, up to a minute), then a row per activity,
/// the busiest first; "… and N more" when they do not all fit, and the shared counter's share
/// ("2 other connections") last.
///
/// Every line is printable (`TerminalText.printable`) and at most `size.columns` cells wide;
/// there are at most `size.rows` lines.
struct TopFrame: Equatable {
    /// The lines, top to bottom, without line ends.
    var lines: [String]
    /// The index in `lines` of the column headings, which a terminal shows highlighted; nil
    /// when no activity is listed (or the screen has no room for them).
    var headingLine: Int?

    /// The terminal's size in cells.
    struct Size: Equatable {
        var columns: Int
        /// Lines available; nil for as many as the activities need (`--once` into a pipe).
        var rows: Int?
    }

    /// The frame for `state`, whose sparkline ends with `second` (on the history's clock).
    ///
    /// - Parameter notice: a problem to show while the service is unavailable (why it is).
    init(state: IndicatorSnapshot, history: RateHistory, second: Int64, size: Size, notice: String? = nil) {
        let columns = max(0, size.columns)
        var lines = [Self.summary(state), Self.sparkline(history, second: second, columns: columns), ""]
        var footer: [String] = []
        let shared = max(Int(state.count), state.activities.count) - state.activities.count
        if shared > 0, state.serviceAvailable { footer.append("\(shared) other connection" + (shared == 1 ? "" : "s")) }
        if !state.serviceAvailable, let notice { footer.append(notice) }

        var headingLine: Int?
        if !state.activities.isEmpty {
            let table = Table(columns: columns)
            // Room for the headings and at least one row; else only the summary lines.
            let room = size.rows.map { $0 - lines.count - 1 - footer.count } ?? Int.max
            if room >= 1 {
                headingLine = lines.count
                lines.append(table.headings)
                let sorted = Self.sorted(state.activities, keeping: room)
                let more = state.activities.count - min(room, state.activities.count)
                let shown = more > 0 ? sorted.prefix(room - 1) : sorted.prefix(room)
                lines += shown.map(table.row)
                if more > 0 { lines.append("… and \(state.activities.count - shown.count) more") }
            }
        }
        lines += footer
        if let rows = size.rows, lines.count > rows { lines.removeLast(lines.count - max(0, rows)) }
        // No trailing spaces or blank lines: the terminal clears the rest, a pipe gets no padding.
        lines = lines.map { line in
            var fitted = TerminalText.fitted(TerminalText.printable(line), to: columns)
            while fitted.last == " " { fitted.removeLast() }
            return fitted
        }
        while lines.last == "" { lines.removeLast() }
        self.lines = lines
        self.headingLine = headingLine.flatMap { $0 < lines.count ? $0 : nil }
    }

    // MARK: - Header

    /// "Network activity: 2 — 45% — 2.3 MB/s, 1 min left", as a tooltip's first line and an
    /// activity's line read; "No network activity" while idle.
    static func summary(_ state: IndicatorSnapshot) -> String {
        guard state.serviceAvailable else { return "Network activity service unavailable" }
        guard state.active else { return "No network activity" }
        let count = max(Int(state.count), state.activities.count)
        var parts = [count > 0 ? "Network activity: \(count)" : "Network activity"]
        if let progress = state.progress { parts.append(TransferText.percent(progress)) }
        var speed: [String] = []
        if state.rate > 0 { speed.append(TransferText.rate(state.rate)) }
        if let remaining = state.remainingSeconds { speed.append(TransferText.remainingWords(remaining)) }
        if !speed.isEmpty { parts.append(speed.joined(separator: ", ")) }
        return parts.joined(separator: " — ")
    }

    /// "last minute ▁▂▃▅▇   peak 5.1 MB/s": as many seconds as fit, up to a minute, the most
    /// recent on the right.
    static func sparkline(_ history: RateHistory, second: Int64, columns: Int) -> String {
        let title = "last minute "
        let peak = history.peak(endingAt: second)
        let legend = peak > 0 ? " peak " + TransferText.rate(peak) : ""
        let width = min(RateHistory.seconds, columns - title.count - legend.count)
        guard width > 0 else { return title }
        return title + history.sparkline(endingAt: second, width: width) + legend
    }

    // MARK: - Rows

    /// The busiest first; equal rates in the order the service lists them (session first,
    /// then by id, which is the order they began). Only the first `limit` are sorted fully.
    static func sorted(_ activities: [ActivityInfo], keeping limit: Int = .max) -> [ActivityInfo] {
        typealias Listed = (offset: Int, element: ActivityInfo)
        func before(_ first: Listed, _ second: Listed) -> Bool {
            first.element.rate != second.element.rate
                ? first.element.rate > second.element.rate : first.offset < second.offset
        }
        guard limit > 0 else { return [] }
        let indexed = Array(activities.enumerated())
        guard limit < indexed.count else { return indexed.sorted(by: before).map(\.element) }
        // A screenful of tens of thousands: keep the best `limit` without sorting them all.
        var best: [Listed] = []
        best.reserveCapacity(limit + 1)
        for entry in indexed {
            guard best.count < limit || before(entry, best[best.count - 1]) else { continue }
            let position = best.firstIndex { before(entry, $0) } ?? best.count
            best.insert(entry, at: position)
            if best.count > limit { best.removeLast() }
        }
        return best.map(\.element)
    }

    /// The activity table's columns, those that fit the width: the activity's title takes what
    /// the others leave, and the columns people miss least go first when the terminal is narrow.
    struct Table {
        struct Column: Sendable {
            var heading: String
            var width: Int
            var value: @Sendable (ActivityInfo) -> String
        }

        /// Fewest cells an activity's title keeps before a column is left out for it.
        static let minimumTitleWidth = 16
        static let separator = "  "

        /// In the order shown; dropped from the first listed in `dropOrder`.
        static let all: [Column] = [
            Column(heading: "KIND", width: 8) { $0.kind },
            Column(heading: "RATE", width: 9) { $0.rate > 0 ? TransferText.rate($0.rate) : "" },
            Column(heading: "MOVED", width: 8) { $0.completed > 0 ? TransferText.bytes($0.completed) : "" },
            Column(heading: "DONE", width: 4) { $0.fraction.map(TransferText.percent) ?? "" },
            Column(heading: "LEFT", width: 8) { $0.remainingSeconds.map(TransferText.clock) ?? "" },
        ]
        static let dropOrder = ["KIND", "MOVED", "LEFT", "DONE", "RATE"]

        let columns: [Column]
        let titleWidth: Int

        init(columns width: Int) {
            var kept = Self.all
            func titleRoom(_ kept: [Column]) -> Int {
                width - kept.reduce(0) { $0 + $1.width + Self.separator.count }
            }
            for name in Self.dropOrder where titleRoom(kept) < Self.minimumTitleWidth {
                kept.removeAll { $0.heading == name }
            }
            columns = kept
            titleWidth = max(0, titleRoom(kept))
        }

        var headings: String {
            cells("ACTIVITY", columns.map(\.heading))
        }

        func row(_ activity: ActivityInfo) -> String {
            cells(TerminalText.printable(activity.title), columns.map { TerminalText.printable($0.value(activity)) })
        }

        /// The title left-aligned, every other cell right-aligned in its column (a kind left).
        private func cells(_ title: String, _ values: [String]) -> String {
            var line = TerminalText.padded(title, to: titleWidth)
            for (column, value) in zip(columns, values) {
                line += Self.separator
                    + TerminalText.padded(value, to: column.width, column.heading == "KIND" ? .left : .right)
            }
            return line
        }
    }
}
