import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// The Debian package that provides each tool the bus tests use.
private let debianPackages: [String: String] = [
    "busctl": "systemd",
    "gdbus": "libglib2.0-bin",
    "dbus-send": "dbus-bin",
    "dbus-monitor": "dbus-bin",
    "dbus-daemon": "dbus-daemon",
    "xmllint": "libxml2-utils",
]

/// Ensures a command-line tool exists in `PATH`.
///
/// - Throws: `BusTestError` naming the Debian package that provides the tool
///   (busctl: systemd, gdbus: libglib2.0-bin, dbus-send and dbus-monitor: dbus-bin,
///   dbus-daemon: dbus-daemon).
public func requireTool(_ name: String) throws {
    if executablePath(for: name) == nil {
        throw missingTool(name)
    }
}

/// Path of a product built beside the test bundle, such as `"netactivityd"`.
///
/// SwiftPM puts every product of a build in one directory; the running test binary is one of
/// them on Linux (`.build/debug/NetActivityPackageTests.xctest`) and sits inside a bundle on
/// Darwin (`…/debug/X.xctest/Contents/MacOS/X`), so the directory is found from
/// `/proc/self/exe`, stepping out of any `.xctest` bundle.
///
/// - Throws: `BusTestError` if the product is not there (not built yet).
public func builtProduct(_ name: String) throws -> String {
    let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: running).deletingLastPathComponent()
    var ancestor = directory
    while ancestor.pathComponents.count > 1 {
        if ancestor.lastPathComponent.hasSuffix(".xctest") {
            directory = ancestor.deletingLastPathComponent()
            break
        }
        ancestor = ancestor.deletingLastPathComponent()
    }
    let candidate = directory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw BusTestError(
            "no built product \(name) in \(directory.path); "
                + "build it first (`swift build --build-tests` builds every product)")
    }
    return candidate
}

// MARK: - Missing tools

/// The error for a tool that is not in `PATH`, naming its Debian package when known.
func missingTool(_ name: String) -> BusTestError {
    if let package = debianPackages[name] {
        return BusTestError(
            "\(name) is not installed (not found in PATH); install the Debian package "
                + "\(package) (`apt-get install \(package)`, or `make deps`)")
    }
    return BusTestError("\(name) is not installed (not found in PATH)")
}
