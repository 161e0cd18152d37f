import BusTestSupport
import DBus
import DesktopApplications
import Foundation
import NetActivity
@testable import NetActivityBridge
import Platform
import Testing

/// What the plasma-jobs source reads from a job view's calls (`JobChange`), what a served job
/// then shows (`ServedJobState`), and when the mirror tells plasmashell what (`MirrorPlan`):
/// pure values, no bus.
@Suite struct PlasmaJobsParsingTests {
    // MARK: - Version 2 setters

    @Test func version2SettersBecomeChanges() throws {
        #expect(try JobChange.version2("setInfoMessage", [.string("Copying")]) == [.infoMessage("Copying")])
        #expect(try JobChange.version2("setProcessedAmount", [.uint64(512), .string("bytes")]) == [.processedBytes(512)])
        #expect(try JobChange.version2("setTotalAmount", [.uint64(2048), .string("bytes")]) == [.totalBytes(2048)])
        #expect(try JobChange.version2("setPercent", [.uint32(42)]) == [.percent(42)])
        #expect(try JobChange.version2("setPercent", [.uint32(4_000)]) == [.percent(100)])
        #expect(try JobChange.version2("setSpeed", [.uint64(1_000)]) == [.speed(1_000)])
        #expect(
            try JobChange.version2("setDescriptionField", [.uint32(0), .string("Source"), .string("/tmp/a.iso")])
                == [.descriptionField(number: 0, name: "Source", value: "/tmp/a.iso")])
        #expect(try JobChange.version2("terminate", [.string("")]) == [.terminated])
        #expect(try JobChange.version2("setError", [.uint32(3)]) == [.error(3)])
    }

    @Test func version2IgnoresOtherUnitsFieldsAndShapes() throws {
        #expect(try JobChange.version2("setProcessedAmount", [.uint64(3), .string("files")]).isEmpty)
        #expect(try JobChange.version2("setTotalAmount", [.uint64(3), .string("BYTES")]).isEmpty)
        #expect(try JobChange.version2("setDescriptionField", [.uint32(7), .string("x"), .string("y")]).isEmpty)
        #expect(try JobChange.version2("setPercent", [.string("42")]).isEmpty)
        #expect(try JobChange.version2("setPercent", []).isEmpty)
        #expect(try JobChange.version2("setDestUrl", [.variant(.string("file:///tmp"))]).isEmpty)
        #expect(try JobChange.version2("noSuchSetter", [.uint32(1)]).isEmpty)
    }

    @Test func aTextTooLongIsRefused() {
        let long = String(repeating: "x", count: JobChange.maximumTextBytes + 1)
        #expect(throws: JobChange.Refused.self) { try JobChange.version2("setInfoMessage", [.string(long)]) }
        #expect(throws: JobChange.Refused.self) {
            try JobChange.version3(VariantDictionary([("title", .string(long))]))
        }
        #expect(throws: JobChange.Refused.self) { try JobChange.version3Terminate(0, long) }
    }

    // MARK: - Version 3 dictionaries

    @Test func version3TakesKnownKeysOfTheRightType() throws {
        let changes = try JobChange.version3(
            VariantDictionary([
                ("title", .string("Copying")), ("descriptionLabel1", .string("Source")),
                ("descriptionValue1", .string("smb://nas/share/movie.mkv")), ("processedBytes", .uint64(10)),
                ("totalBytes", .uint64(100)), ("percent", .uint32(10)), ("speed", .uint64(5)),
                ("suspended", .boolean(false)), ("processedFiles", .uint64(1)), ("title", .uint32(3)),
                ("infoMessage", .int32(4)),
            ]))
        #expect(
            changes == [
                .title("Copying"), .processedBytes(10), .totalBytes(100), .percent(10), .speed(5), .suspended(false),
                .descriptionField(number: 0, name: "Source", value: "smb://nas/share/movie.mkv"),
            ])
        #expect(try JobChange.version3(VariantDictionary([("descriptionValue2", .string(""))])) == [.clearDescriptionField(number: 1)])
        #expect(try JobChange.version3Terminate(0, "") == [.terminated])
        #expect(try JobChange.version3Terminate(1, "Cancelled") == [.error(1), .terminated])
    }

    @Test func aDictionaryIsReadForItsFirstEntriesOnly() throws {
        let many = (0..<1_000).map { ("key\($0)", Value.uint32(UInt32($0))) } + [("title", Value.string("late"))]
        #expect(try JobChange.version3(VariantDictionary(many)).isEmpty)
    }

    // MARK: - A served job's activity

    @Test func theLabelIsTheTitleAndTheFileOrTheInfoMessage() {
        var state = ServedJobState()
        #expect(!state.isNamed)
        state.apply([.infoMessage("Examining")])
        #expect(state.label == "Examining")
        state.apply([.title("Copying")])
        #expect(state.label == "Copying: Examining")
        state.apply([.descriptionField(number: 0, name: "Source", value: "file:///home/u/movie.mkv?x=1")])
        #expect(state.label == "Copying: movie.mkv")
        state.apply([.clearDescriptionField(number: 0)])
        state.apply([.descriptionField(number: 0, name: "Name", value: "no path here")])
        #expect(state.label == "Copying: Examining")
    }

    @Test func progressIsBytesWhenTheTotalIsKnownElseThePercent() {
        var state = ServedJobState()
        #expect(state.progress == nil)
        state.apply([.percent(40)])
        #expect(state.progress == .fraction(0.4))
        state.apply([.processedBytes(300), .totalBytes(1_000)])
        #expect(state.progress == .bytes(completed: 300, total: 1_000))
        state.apply([.processedBytes(5_000)])
        #expect(state.progress == .bytes(completed: 1_000, total: 1_000))
    }

    // MARK: - The mirror's plan

    private static func activity(_ id: UInt32, started: UInt64, completed: UInt64 = 0, total: UInt64 = 0) -> ActivityInfo {
        var activity = ActivityInfo(id: id, owner: ":1.5", label: "Backup", completed: completed, total: total, started: started)
        activity.bus = .session
        return activity
    }

    @Test func anActivityBecomesAJobAfterThreeSecondsAndIsUpdatedOnceASecondWithWhatChanged() {
        var plan = MirrorPlan()
        let clock = ContinuousClock()
        let start = clock.now
        let wall: UInt64 = 1_000_000_000
        let key = MirrorPlan.Key(bus: .session, id: 1)
        var step = plan.step([(key, Self.activity(1, started: wall, completed: 10, total: 100))], now: start, wallMicroseconds: wall + 1_000_000)
        #expect(step.actions.isEmpty)
        #expect(step.next == start + .seconds(2))

        step = plan.step([(key, Self.activity(1, started: wall, completed: 10, total: 100))], now: start + .seconds(2), wallMicroseconds: wall + 3_000_000)
        guard case .request(key) = step.actions.first else {
            Issue.record("no request after 3 s: \(step.actions)")
            return
        }
        let first = plan.viewReady(key, now: start + .seconds(2))
        #expect(first.map(\.0) == ["title", "percent", "processedBytes", "totalBytes"])

        // Within the second: held, with a wake-up at its end.
        step = plan.step([(key, Self.activity(1, started: wall, completed: 50, total: 100))], now: start + .milliseconds(2_500), wallMicroseconds: wall + 3_500_000)
        #expect(step.actions.isEmpty)
        #expect(step.next == start + .seconds(3))
        step = plan.step([(key, Self.activity(1, started: wall, completed: 50, total: 100))], now: start + .seconds(3), wallMicroseconds: wall + 4_000_000)
        guard case .update(key, let entries) = step.actions.first else {
            Issue.record("no update: \(step.actions)")
            return
        }
        #expect(entries.map(\.0) == ["percent", "processedBytes"])

        step = plan.step([], now: start + .seconds(4), wallMicroseconds: wall + 5_000_000)
        guard case .terminate(key) = step.actions.first else {
            Issue.record("no terminate: \(step.actions)")
            return
        }
        #expect(plan.heldJobs.isEmpty)
    }

    @Test func whatAServiceSendsNeverMakesAFieldItCannotHold() {
        for fraction in [Double.nan, .infinity, -.infinity, -3, 7] {
            var activity = Self.activity(1, started: 0)
            activity.reportedFraction = fraction
            activity.rate = fraction
            let fields = MirrorPlan.Fields(activity)
            #expect(fields.percent.map { $0 <= 100 } ?? true)
        }
    }

    @Test func anActivityThatEndsWithinThreeSecondsIsNeverAJob() {
        var plan = MirrorPlan()
        let now = ContinuousClock().now
        let key = MirrorPlan.Key(bus: .system, id: 9)
        var step = plan.step([(key, Self.activity(9, started: 10_000_000))], now: now, wallMicroseconds: 11_000_000)
        #expect(step.actions.isEmpty)
        step = plan.step([], now: now + .seconds(1), wallMicroseconds: 12_000_000)
        #expect(step.actions.isEmpty)
        #expect(step.next == nil)
    }
}

/// Browser downloads are left to plasma-browser-integration while its host runs: decided from a
/// made-up `/proc` (`ProcFS(root:)`), no process started.
@Suite struct BrowserIntegrationTests {
    private static func process(_ pid: UInt32, _ arguments: [String], in root: String) throws {
        try FileManager.default.createDirectory(atPath: "\(root)/\(pid)", withIntermediateDirectories: true)
        try Data(arguments.joined(separator: "\0").utf8 + [0]).write(to: URL(fileURLWithPath: "\(root)/\(pid)/cmdline"))
    }

    private static func download(from pid: UInt32, kind: String = "download") -> ActivityInfo {
        ActivityInfo(id: 1, owner: ":1.9", label: "film.mkv", completed: 0, total: 0, started: 0, processID: pid, kind: kind)
    }

    @Test func theExtensionsDownloadsAreLeftOutOnlyWhileTheIntegrationRuns() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Self.process(100, ["/usr/bin/netactivity", "browser-host", "chrome-extension://x/"], in: root)
        try Self.process(300, ["/usr/bin/rsync", "-a"], in: root)
        #expect(!BrowserIntegration(processes: Processes(proc: ProcFS(root: root))).showsItself(Self.download(from: 100)))

        try Self.process(200, ["/usr/bin/plasma-browser-integration-host", "/usr/lib/mozilla/native-messaging-hosts"], in: root)
        let integration = BrowserIntegration(processes: Processes(proc: ProcFS(root: root)))
        #expect(integration.showsItself(Self.download(from: 100)))
        #expect(!integration.showsItself(Self.download(from: 300)), "not the extension's host")
        #expect(!integration.showsItself(Self.download(from: 100, kind: "upload")), "not a download")
    }
}

/// Random calls, as a fuzzer would make them: every member of both views with arguments of any
/// type and length, read into changes and applied. Nothing traps, texts stay within their
/// bound, and a job's progress stays a fraction from 0 to 1 or bytes within their total.
@Suite struct JobChangeRandomTests {
    private static let members = [
        "setInfoMessage", "setDescriptionField", "clearDescriptionField", "setProcessedAmount", "setTotalAmount",
        "setPercent", "setSpeed", "setSuspended", "setError", "terminate", "setDestUrl", "noSuchMember",
    ]
    private static let keys = [
        "title", "infoMessage", "descriptionLabel1", "descriptionValue1", "descriptionLabel2", "descriptionValue2",
        "processedBytes", "totalBytes", "percent", "speed", "suspended", "destUrl", "x",
    ]

    private static func value(_ random: inout SeededGenerator) -> Value {
        switch random.next() % 8 {
        case 0: .string(String(repeating: "é/", count: Int(random.next() % 3_000)))
        case 1: .uint32(UInt32(truncatingIfNeeded: random.next()))
        case 2: .uint64(random.next())
        case 3: .int32(Int32(truncatingIfNeeded: random.next()))
        case 4: .boolean(random.next() % 2 == 0)
        case 5: .double(Double(bitPattern: random.next()))
        case 6: .variant(.string("bytes"))
        default: .string(["bytes", "files", "", "BYTES"][Int(random.next() % 4)])
        }
    }

    @Test func randomCallsNeverTrapAndKeepAJobInBounds() {
        var random = SeededGenerator(seed: 46)
        var state = ServedJobState()
        for _ in 0..<5_000 {
            var changes: [JobChange] = []
            if random.next() % 2 == 0 {
                let arguments = (0..<Int(random.next() % 4)).map { _ in Self.value(&random) }
                changes = (try? JobChange.version2(Self.members[Int(random.next() % UInt64(Self.members.count))], arguments)) ?? []
            } else {
                let entries = (0..<Int(random.next() % 6)).map { _ in
                    (Self.keys[Int(random.next() % UInt64(Self.keys.count))], Self.value(&random))
                }
                changes = (try? JobChange.version3(VariantDictionary(entries))) ?? []
            }
            state.apply(changes.filter { $0 != .terminated })
            #expect(state.title.utf8.count <= JobChange.maximumTextBytes && state.infoMessage.utf8.count <= JobChange.maximumTextBytes)
            #expect(state.descriptionFields.keys.allSatisfy { JobChange.descriptionFields.contains($0) })
            switch state.progress {
            case .fraction(let fraction): #expect(fraction >= 0 && fraction <= 1)
            case .bytes(let completed, let total): #expect(total == 0 || completed <= total)
            case nil: break
            }
            _ = state.label
        }
    }
}
