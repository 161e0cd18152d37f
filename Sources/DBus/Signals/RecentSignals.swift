/// Signal templates: the `PropertiesChanged` signals built lately, most recent last, each kept
/// unsent so that a copy of it can go out instead of a signal built anew.
///
/// A busy desktop flips `Active` back and forth, sending the same two signals over and over;
/// libdbus builds one slowly (each value appended rewrites the header's signature field) and
/// copies one in a small fraction of that (figures in docs/benchmarks.md). Only signals made of
/// a few basic values are kept, so the cache stays small and quick to search.
///
/// A kept signal also serves the same contents at another path, with the path set on the copy:
/// an owner's attribution reaches each of its objects as one and the same signal, and building
/// each anew would also push the main object's signals out of the cache.
final class RecentSignals {
    private struct Entry {
        let interface: InterfaceName
        let path: ObjectPath
        let changed: [(MemberName, Value)]
        let template: Message

        func matches(_ interface: InterfaceName, _ changed: [(MemberName, Value)]) -> Bool {
            self.interface == interface && self.changed.count == changed.count
                && zip(self.changed, changed).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
    }

    private var entries: [Entry] = []
    /// Signals kept at once.
    static let limit = 4
    /// Changed values a kept signal may carry.
    static let valueLimit = 4

    /// Whether a signal with these contents is worth keeping.
    static func isCacheable(changed: [(MemberName, Value)], invalidated: [MemberName]) -> Bool {
        invalidated.isEmpty && changed.count <= valueLimit && changed.allSatisfy { $0.1.isBasic }
    }

    /// A copy, ready to send, of the signal kept for these contents; nil when none is kept.
    ///
    /// - Throws: `NoMemory` when libdbus cannot copy it.
    func copy(
        interface: InterfaceName, path: ObjectPath, changed: [(MemberName, Value)]
    ) throws(BusError) -> Message? {
        guard let index = entries.lastIndex(where: { $0.matches(interface, changed) }) else { return nil }
        let entry = entries[index]
        if index != entries.count - 1 { entries.append(entries.remove(at: index)) }
        let (signal, template) = try entry.template.copy(from: entry.path, to: path)
        if let template {
            entries[entries.count - 1] = Entry(interface: interface, path: path, changed: entry.changed, template: template)
        }
        return signal
    }

    /// Keeps a copy of `signal`, whose contents these are, as the most recent; the oldest goes
    /// when there are `limit`.
    func remember(
        _ signal: Message, interface: InterfaceName, path: ObjectPath, changed: [(MemberName, Value)]
    ) throws(BusError) {
        let template = try signal.copy()
        if entries.count == Self.limit { entries.removeFirst() }
        entries.append(Entry(interface: interface, path: path, changed: changed, template: template))
    }
}
