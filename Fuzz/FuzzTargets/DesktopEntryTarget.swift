import DesktopApplications

extension FuzzTarget {
    /// A desktop entry file, as the one reader every name, icon and program lookup goes
    /// through reads it; then whether it runs a program.
    public static let desktopEntry = FuzzTarget("desktop-entry") { bytes in
        guard let entry = DesktopEntry(parsing: bytes) else { return }
        _ = entry.runs("firefox")
        if let program = entry.exec?.split(separator: " ").first { _ = entry.runs(String(program)) }
    }
}
