import DBus
import NetActivityContract

/// What an activity is for, given when it begins: the application it is on behalf of, an
/// icon, and its kind. Panels show them ("GNOME Software — Downloading updates" with the
/// right glyph). Every field is optional; later hints become new fields here, not new
/// overloads of `begin`.
///
///     let activity = NetActivityClient.shared.begin(
///         "Downloading updates", hints: ActivityHints(application: "org.gnome.Software", kind: .update))
public struct ActivityHints: Sendable, Equatable {
    /// What an activity is for.
    public enum Kind: String, Sendable, CaseIterable {
        case download, upload, sync, update, other
    }

    /// The desktop application id the activity is for (`org.gnome.Software`), when the app
    /// reports on another's behalf; nil for the reporting app itself.
    public var application: String?
    /// A themed icon name or an absolute path to an icon.
    public var icon: String?
    /// What the activity is for; the service reads a missing kind as `other`.
    public var kind: Kind?

    public init(application: String? = nil, icon: String? = nil, kind: Kind? = nil) {
        self.application = application
        self.icon = icon
        self.kind = kind
    }

    /// Whether no hint is given: such an activity begins with plain `BeginActivity`.
    public var isEmpty: Bool { application == nil && icon == nil && kind == nil }

    /// The hints as `BeginActivityWithHints` takes them, each string cut on a character
    /// boundary to the service's limit so a long one never costs the activity.
    var dictionary: VariantDictionary {
        typealias Hint = NetActivityBus.Hint
        var entries: [(String, Value)] = []
        if let application { entries.append((Hint.application, .string(Self.fitted(application)))) }
        if let icon { entries.append((Hint.icon, .string(Self.fitted(icon)))) }
        if let kind { entries.append((Hint.kind, .string(kind.rawValue))) }
        return VariantDictionary(entries)
    }

    static func fitted(_ text: String) -> String {
        NetActivityClient.fitted(text, toBytes: NetActivityBus.Hint.maximumBytes)
    }
}
