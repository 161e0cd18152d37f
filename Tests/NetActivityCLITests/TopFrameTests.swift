@testable import NetActivityCLI
import Foundation
import NetActivity
import NetActivityContract
import Testing

/// An activity as the mirror lists it; `application` names the owner ("chromium" reads
/// "Chromium"), so no desktop entry is looked up.
private func activity(
    _ id: UInt32, _ label: String, application: String = "", kind: String = "other", completed: UInt64 = 0,
    total: UInt64 = 0, rate: Double = 0, bus: ActivityInfo.Bus = .session
) -> ActivityInfo {
    ActivityInfo(
        id: id, owner: ":1.\(id)", label: label, completed: completed, total: total, started: 0,
        application: application, bus: bus, kind: kind, rate: rate)
}

/// The state the mirror would hand over for `activities`: counts, progress and rate derived.
private func state(_ activities: [ActivityInfo], shared: UInt32 = 0) -> IndicatorSnapshot {
    let count = shared + UInt32(activities.count)
    return IndicatorSnapshot(
        active: count > 0, visible: count > 0, count: count, progress: IndicatorSnapshot.progress(of: activities),
        activities: activities, rate: IndicatorSnapshot.rate(of: activities))
}

private let wide = TopFrame.Size(columns: 100, rows: 30)

private func frame(
    _ state: IndicatorSnapshot, history: RateHistory = RateHistory(), size: TopFrame.Size = wide, notice: String? = nil
) -> TopFrame {
    TopFrame(state: state, history: history, second: 1000, size: size, notice: notice)
}

/// The rows of a frame: the lines after the column headings.
private func rows(_ frame: TopFrame) -> [String] {
    guard let heading = frame.headingLine else { return [] }
    return Array(frame.lines[(heading + 1)...])
}

/// `netactivity top`'s frames, made without a terminal.
@Suite struct TopFrameTests {
    /// `frame`, for where a local named `frame` hides it.
    static func frameOf(_ state: IndicatorSnapshot, size: TopFrame.Size) -> TopFrame {
        frame(state, size: size)
    }

    @Test func rowsAreTheBusiestFirstAndEqualRatesKeepTheServicesOrder() {
        let frame = frame(state([
            activity(1, "slow", rate: 1_000), activity(2, "fast", rate: 3_000_000), activity(3, "stalled"),
            activity(4, "also fast", rate: 3_000_000), activity(5, "system fast", rate: 3_000_000, bus: .system),
        ]))
        let order = rows(frame).map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(order == ["fast", "also", "system:", "slow", "stalled"], "\(frame.lines)")
    }

    @Test func aRowShowsTitleKindRateBytesPercentAndTimeLeft() throws {
        // 45 % of 26.7 MB at 2.3 MB/s: 14.7 MB left, 6.4 s.
        let download = activity(
            7, "report.pdf", application: "chromium", kind: "download", completed: 12_000_000, total: 26_700_000,
            rate: 2_300_000)
        let frame = frame(state([download]))
        #expect(frame.lines[0] == "Network activity: 1 — 44% — 2.3 MB/s, 7 s left")
        let heading = try #require(frame.headingLine)
        #expect(frame.lines[heading].hasPrefix("ACTIVITY "))
        let columns = frame.lines[heading].split(separator: " ")
        #expect(columns == ["ACTIVITY", "KIND", "RATE", "MOVED", "DONE", "LEFT"])
        let row = try #require(rows(frame).first)
        #expect(row.hasPrefix("Chromium — report.pdf "), "the title panels show: \(row)")
        let cells = row.split(separator: "  ").map(\.trimmingSpaces).filter { !$0.isEmpty }
        #expect(cells == ["Chromium — report.pdf", "download", "2.3 MB/s", "12.0 MB", "44%", "0:07"], "\(row)")
        // Every cell ends where its heading does (the title's and the kind's begin there).
        for heading in ["RATE", "MOVED", "DONE", "LEFT"] {
            let end = try #require(frame.lines[frame.headingLine!].range(of: heading)).upperBound
            let headingEnd = TerminalText.width(String(frame.lines[frame.headingLine!][..<end]))
            let value = cells[["RATE": 2, "MOVED": 3, "DONE": 4, "LEFT": 5][heading]!]
            let valueEnd = try #require(row.range(of: value)).upperBound
            #expect(TerminalText.width(String(row[..<valueEnd])) == headingEnd, "\(heading) in \(frame.lines)")
        }
    }

    @Test func unknownTotalsLeavePercentAndTimeLeftBlank() throws {
        let upload = activity(3, "photos", application: "rclone", kind: "upload", completed: 512_000, rate: 64_000)
        let counter = activity(4, "queue", application: "sh")
        let frame = frame(state([upload, counter], shared: 2))
        #expect(frame.lines[0] == "Network activity: 4 — 64.0 kB/s")
        let rows = rows(frame)
        #expect(rows.count == 3, "\(frame.lines)")
        #expect(rows[0].split(separator: "  ").map(\.trimmingSpaces).filter { !$0.isEmpty }
            == ["Rclone — photos", "upload", "64.0 kB/s", "512 kB"])
        #expect(rows[1].split(separator: "  ").map(\.trimmingSpaces).filter { !$0.isEmpty } == ["Sh — queue", "other"])
        #expect(rows[2] == "2 other connections", "the shared counter's share")
    }

    @Test func fractionModeShowsAPercentWithoutBytes() throws {
        var update = activity(9, "Updates", application: "org.gnome.Software", kind: "update")
        update.reportedFraction = 0.5
        let row = try #require(rows(frame(state([update]))).first)
        #expect(row.split(separator: "  ").map(\.trimmingSpaces).filter { !$0.isEmpty } == ["Software — Updates", "update", "50%"])
    }

    @Test func theIdleAndUnavailableStates() {
        #expect(frame(IndicatorSnapshot()).lines == ["No network activity", "last minute"])
        #expect(frame(IndicatorSnapshot()).headingLine == nil)
        #expect(frame(.unavailable).lines == ["Network activity service unavailable", "last minute"])
        let explained = frame(.unavailable, notice: "cannot connect to unix:path=/x: \u{1B}[31mrefused")
        #expect(explained.lines == [
            "Network activity service unavailable", "last minute", "", "cannot connect to unix:path=/x: ?[31mrefused",
        ])
        // A notice is for while nothing can be read; once a service answers, it is not shown.
        #expect(frame(IndicatorSnapshot(), notice: "old problem").lines == ["No network activity", "last minute"])
        // Only the shared counter: no table.
        let pushed = frame(state([], shared: 1))
        #expect(pushed.lines == ["Network activity: 1", "last minute", "", "1 other connection"])
    }

    // MARK: - Size

    @Test func narrowTerminalsLoseColumnsBeforeTheTitle() throws {
        let download = activity(
            1, "a rather long label for a narrow terminal, longer than the widest title column", application: "curl", kind: "download", completed: 1_000,
            total: 4_000, rate: 100)
        var seen: [[Substring]] = []
        for columns in [100, 60, 50, 40, 30, 20, 10, 1, 0] {
            let frame = frame(state([download]), size: TopFrame.Size(columns: columns, rows: 20))
            for line in frame.lines {
                #expect(TerminalText.width(line) <= columns, "\(columns) columns: \(line)")
            }
            guard let heading = frame.headingLine else { continue }
            seen.append(frame.lines[heading].split(separator: " "))
            if columns >= 20 {
                #expect(rows(frame)[0].hasPrefix("Curl — a rather"), "the title keeps its start: \(frame.lines)")
                #expect(rows(frame)[0].contains("…"), "a cut title says so: \(frame.lines)")
            }
        }
        #expect(seen.first == ["ACTIVITY", "KIND", "RATE", "MOVED", "DONE", "LEFT"])
        #expect(seen.contains(["ACTIVITY", "RATE", "DONE", "LEFT"]))
        #expect(seen.contains(["ACTIVITY", "RATE", "DONE"]))
        #expect(seen.contains(["ACTIVITY", "RATE"]))
        #expect(seen.contains(["ACTIVITY"]))
    }

    @Test func shortTerminalsListWhatFitsAndCountTheRest() throws {
        let many = (1...50).map { activity(UInt32($0), "transfer \($0)", rate: Double($0)) }
        let frame = frame(state(many, shared: 3), size: TopFrame.Size(columns: 80, rows: 10))
        #expect(frame.lines.count == 10, "\(frame.lines)")
        // Summary, sparkline, blank, headings; then 4 rows, the rest counted, the shared counter.
        #expect(rows(frame).prefix(4).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            == ["transfer 50", "transfer 49", "transfer 48", "transfer 47"])
        #expect(frame.lines[8] == "… and 46 more")
        #expect(frame.lines[9] == "3 other connections")

        for rows in 0...5 {
            let tiny = TopFrameTests.frameOf(state(many), size: TopFrame.Size(columns: 80, rows: rows))
            #expect(tiny.lines.count <= rows, "\(rows) rows: \(tiny.lines)")
            #expect(tiny.headingLine.map { $0 < tiny.lines.count } ?? true)
        }
        // Into a pipe: every activity.
        let all = TopFrameTests.frameOf(state(many), size: TopFrame.Size(columns: 80, rows: nil))
        #expect(rows(all).count == 50)
    }

    @Test func theBestRowsOfAHugeListAreTheFullSortsFirst() {
        let many = (0..<5_000).map { index in
            activity(UInt32(index + 1), "t\(index)", rate: Double((index * 7_919) % 1_000))
        }
        #expect(TopFrame.sorted(many, keeping: 20) == Array(TopFrame.sorted(many).prefix(20)))
        #expect(TopFrame.sorted(many, keeping: 0) == [])
    }

    // MARK: - Sparkline

    @Test func theSparklineIsTheLastMinuteScaledToItsPeak() {
        var history = RateHistory()
        for (offset, rate) in [0.0, 1, 2, 3, 4, 5, 6, 7, 8].enumerated() {
            history.record(rate * 1_000_000, at: 1000 - 8 + Int64(offset))
        }
        let line = frame(state([activity(1, "x", rate: 8_000_000)]), history: history).lines[1]
        #expect(line.hasPrefix("last minute "))
        #expect(line.hasSuffix(" ▁▂▃▄▅▆▇█ peak 8.0 MB/s"), "\(line)")
        // 60 seconds of bars between the title and the peak, the older ones blank.
        #expect(TerminalText.width(line) == "last minute ".count + 60 + " peak 8.0 MB/s".count)
        // A narrower terminal shows the most recent seconds.
        let narrow = frame(state([]), history: history, size: TopFrame.Size(columns: 30, rows: 10)).lines[1]
        #expect(narrow == "last minute ▅▆▇█ peak 8.0 MB/s")
    }

    @Test func theHistoryKeepsEachSecondsHighestAndForgetsAfterAMinute() {
        var history = RateHistory()
        history.record(5, at: 100)
        history.record(9, at: 100)
        history.record(7, at: 100)
        history.record(.nan, at: 101)
        history.record(-3, at: 102)
        #expect(history.rates(endingAt: 102, count: 3) == [9, 0, 0])
        #expect(history.peak(endingAt: 159) == 9)
        #expect(history.peak(endingAt: 160) == 0, "a minute later the second has left the window")
        history.record(4, at: 160)
        #expect(history.rates(endingAt: 160, count: 61).count == 60)
        #expect(history.rates(endingAt: 160, count: 61).last == 4)
        #expect(history.sparkline(endingAt: 160, width: 3) == "  █")
        #expect(history.sparkline(endingAt: 170, width: 3) == "   ")
        #expect(RateHistory().sparkline(endingAt: -5, width: 4) == "    ")
    }

    // MARK: - Hostile text

    @Test func hostileLabelsReachTheTerminalHarmlessAndKeepTheLayout() throws {
        let labels = [
            "\u{1B}]0;owned\u{07}title \u{1B}[2J\u{1B}[H cleared",  // OSC retitle, clear screen
            "\u{9B}31m C1 CSI \u{85} next line",  // C1 controls
            "\u{202E}evil.exe\u{202C} bidi \u{2066}isolate\u{2069}",  // reordering
            "zero\u{200B}width\u{200D}joiner\u{00AD}soft\u{FEFF}bom",
            "line\nfeed\r\ncarriage\ttab\u{7F}del\u{2028}sep",
            "下载报告文件下载报告文件下载报告文件下载报告文件下载报告文件",  // wide, cut mid-way
            "👨‍👩‍👧‍👦 family 🇫🇷 flag ❤️ heart e\u{301}\u{301}\u{301} marks",
            "\u{E000}private \u{0378}unassigned",
        ]
        let activities = labels.enumerated().map { index, label in
            activity(UInt32(index + 1), label, application: "x", kind: "download\u{1B}[5m", completed: 1, total: 2, rate: 10)
        }
        for columns in [100, 47, 33] {
            let frame = frame(state(activities), size: TopFrame.Size(columns: columns, rows: 30))
            for line in frame.lines {
                for scalar in line.unicodeScalars {
                    let category = scalar.properties.generalCategory
                    #expect(![.control, .format, .lineSeparator, .paragraphSeparator, .unassigned].contains(category),
                            "U+\(String(scalar.value, radix: 16)) in \(line)")
                }
                #expect(TerminalText.width(line) <= columns, "\(columns): \(line)")
            }
            // Every row is as wide as the headings: the columns line up whatever the label.
            let headingWidth = TerminalText.width(frame.lines[try #require(frame.headingLine)])
            for row in rows(frame) {
                #expect(TerminalText.width(row) == headingWidth, "\(columns): \(row)")
            }
        }
        let shown = rows(frame(state(activities))).joined(separator: "\n")
        #expect(shown.contains("X — ?]0;owned?title ?[2J?[H cleared"))
        #expect(shown.contains("evil.exe bidi isolate"))
        #expect(shown.contains("zerowidthjoinersoftbom"))
        #expect(shown.contains("line?feed??carriage?tab?del sep"))
        #expect(shown.contains("download?[5m") == false, "the kind is cut to its column: \(shown)")
    }

    @Test func cellWidths() {
        #expect(TerminalText.width("abc") == 3)
        #expect(TerminalText.width("下载") == 4)
        #expect(TerminalText.width("e\u{301}") == 1)
        #expect(TerminalText.width("한국어") == 6)
        #expect(TerminalText.width("ｆｕｌｌ") == 8)
        #expect(TerminalText.width(TerminalText.printable("👨‍👩‍👧")) == 2)
        #expect(TerminalText.printable("👨‍👩‍👧") == "👨")
        #expect(TerminalText.printable("🇫🇷 flag") == "FR flag")
        #expect(TerminalText.width("—…") == 2)
        // A wide character that would straddle the edge is left out whole.
        #expect(TerminalText.fitted("ab下载", to: 4) == "ab…")
        #expect(TerminalText.fitted("ab下载", to: 5) == "ab下…")
        #expect(TerminalText.fitted("ab下载", to: 6) == "ab下载")
        #expect(TerminalText.padded("下", to: 3, .right) == " 下")
        #expect(TerminalText.fitted("abc", to: 0) == "")
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
