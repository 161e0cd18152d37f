import DBus
@testable import NetActivityBridge
import Testing

/// What the launcher source takes from an `Update` signal: desktop ids only, progress keys of
/// the right type only.
@Suite struct LauncherUpdateTests {
    @Test(arguments: [
        ("application://org.gnome.Software.desktop", "org.gnome.Software"),
        ("application://firefox-esr.desktop", "firefox-esr"),
        ("application://code_url-handler.desktop", "code_url-handler"),
        ("application://x.desktop.desktop", "x.desktop"),
    ])
    func desktopIDs(uri: String, id: String) {
        #expect(LauncherUpdate.desktopID(in: uri) == id)
    }

    @Test(arguments: [
        "", "application://", "application://.desktop", "application://.hidden.desktop",
        "application://../../etc/passwd.desktop", "application:///usr/share/applications/x.desktop",
        "application://a b.desktop", "application://caf\u{E9}.desktop", "application://x",
        "file://x.desktop", "x.desktop", "APPLICATION://x.desktop",
        "application://" + String(repeating: "a", count: 256) + ".desktop",
        String(repeating: "a", count: 10_240),
    ])
    func notDesktopIDs(uri: String) {
        #expect(LauncherUpdate.desktopID(in: uri) == nil)
    }

    @Test func theLongestDesktopIDIsTaken() {
        let id = String(repeating: "a", count: 255)
        #expect(LauncherUpdate.desktopID(in: "application://\(id).desktop") == id)
    }

    @Test func progressKeysOfTheRightTypeOnly() {
        /// The keys taken, as "PROGRESS VISIBLE" with "-" for a key not given; nil for no update.
        func taken(_ properties: [(String, Value)]) -> String? {
            guard case .array(_, let entries) = Value.properties(properties),
                let update = LauncherUpdate(desktopID: "x", entries: entries)
            else { return nil }
            return "\(update.progress.map { "\($0)" } ?? "-") \(update.progressVisible.map { "\($0)" } ?? "-")"
        }
        #expect(taken([("progress", .double(0.5))]) == "0.5 -")
        #expect(taken([("progress-visible", .boolean(false))]) == "- false")
        #expect(taken([("progress", .double(-3)), ("progress-visible", .boolean(true))]) == "0.0 true")
        #expect(taken([("progress", .double(7.5)), ("count", .int64(2))]) == "1.0 -")
        #expect(taken([("progress", .double(.infinity))]) == nil)
        #expect(taken([("progress", .double(.nan))]) == nil)
        #expect(taken([("progress", .string("0.5")), ("progress-visible", .int32(1))]) == nil)
        #expect(taken([("count", .int64(3)), ("count-visible", .boolean(true)), ("urgent", .boolean(true))]) == nil)
        #expect(taken([]) == nil)
        // A later duplicate wins, as it would in a dictionary.
        #expect(taken([("progress", .double(0.2)), ("progress", .double(0.3))]) == "0.3 -")
    }
}
