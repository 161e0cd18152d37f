import DBus
import DesktopApplications
import NetActivityContract

/// One `com.canonical.Unity.LauncherEntry.Update(s app_uri, a{sv} properties)` signal, as far
/// as progress goes: the desktop id it is for, and the progress keys it carries.
///
/// A signal carries only the keys that changed since its sender's last one, so each field is
/// nil when the signal says nothing of it. Everything comes from another process: a signal of
/// another signature, an `app_uri` that names no desktop id, a key of the wrong type or a
/// fraction that is not a number is dropped, never trusted.
struct LauncherUpdate: Equatable {
    /// The desktop id, without `.desktop`: `org.example.App` for `application://org.example.App.desktop`.
    var desktopID: String
    /// `progress`, clamped to 0...1.
    var progress: Double?
    /// `progress-visible`.
    var progressVisible: Bool?

    /// `com.canonical.Unity.LauncherEntry.Update`, declared as NetActivity declares its own
    /// signals.
    static let signal = SignalDescriptor<String, VariantDictionary>(
        "Update", of: "com.canonical.Unity.LauncherEntry", "app_uri", "properties",
        doc: "An application's launcher entry changed: the keys that changed.")
    static let uriPrefix = "application://"
    static let uriSuffix = ".desktop"

    /// The update `message` carries, or nil when it is no `Update` signal, names no desktop id,
    /// or says nothing of progress (a `count` alone).
    init?(_ message: Message) {
        guard let (uri, properties) = Self.signal.decode(message), let id = Self.desktopID(in: uri),
            let entries = properties.value.elements
        else { return nil }
        self.init(desktopID: id, entries: entries)
    }

    /// The progress keys among `entries` (the `a{sv}`'s dictionary entries); nil without any.
    init?(desktopID: String, entries: [Value]) {
        self.desktopID = desktopID
        for entry in entries {
            guard case .dictEntry(.string(let key), .variant(let value)) = entry else { continue }
            switch (key, value) {
            case ("progress", .double(let fraction)) where fraction.isFinite:
                progress = min(1, max(0, fraction))
            case ("progress-visible", .boolean(let visible)):
                progressVisible = visible
            default:
                continue  // `count`, `urgent`, `quicklist`, keys of later versions, wrong types
            }
        }
        guard progress != nil || progressVisible != nil else { return nil }
    }

    /// The desktop id in `application://ID.desktop`, or nil when `uri` has another shape or
    /// `ID` could not name a desktop entry (a path, a hidden file, more than 255 bytes).
    static func desktopID(in uri: String) -> String? {
        // Longer than any desktop id could make it: not worth looking at further.
        guard uri.utf8.count <= uriPrefix.utf8.count + 255 + uriSuffix.utf8.count,
            uri.hasPrefix(uriPrefix), uri.hasSuffix(uriSuffix)
        else { return nil }
        let id = String(uri.dropFirst(uriPrefix.count).dropLast(uriSuffix.count))
        return DesktopEntries.isDesktopID(id) ? id : nil
    }
}
