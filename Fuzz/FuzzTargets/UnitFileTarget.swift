import NetActivity
@testable import NetActivityBridge

extension FuzzTarget {
    /// What the traffic source reads to name a system unit's transfers: its first line as the
    /// unit's name (a cgroup directory's, which a delegated subtree's owner chooses), the rest as
    /// its unit file, whose `Description=` is expanded and cleaned into a label, and the icon of
    /// the name.
    public static let unitFile = FuzzTarget("unit-file") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        let newline = text.firstIndex(of: "\n") ?? text.endIndex
        let unit = String(text[..<newline])
        let name = UnitName(unit)
        _ = SystemUnitIcons.icon(of: unit)
        guard let description = UnitDescriptions.description(inUnitFile: String(text[newline...])) else { return }
        _ = PrintableText.label(UnitDescriptions.specifiersExpanded(description, instance: name.instance, unit: unit))
    }
}
