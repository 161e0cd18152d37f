import DBus
@testable import NetActivityBridge

extension FuzzTarget {
    /// A message off the session bus, as the launcher source's filter reads every signal: is it
    /// a Unity `LauncherEntry.Update`, for which desktop id, with which progress keys.
    public static let launcherUpdate = FuzzTarget("launcher-update") { bytes in
        guard let message = try? Message(wireBytes: bytes) else { return }
        _ = LauncherUpdate(message)
    }
}
