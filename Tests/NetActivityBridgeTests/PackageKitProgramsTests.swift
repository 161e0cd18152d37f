import BusTestSupport
import Foundation
import Testing

@testable import NetActivityBridge

#if canImport(Glibc)
import Glibc
#endif

/// Which application a transaction is claimed for: the asking process's program, and the
/// desktop entry that runs it.
@Suite struct PackageKitProgramsTests {
    @Test func aProcessIsNamedByItsProgram() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        defer {
            child.send(signal: SIGKILL)
            _ = try? child.waitForExit(timeout: .seconds(5))
        }
        #expect(PackageKitPrograms.programName(ofProcess: UInt32(child.pid)) == "sleep")
        #expect(PackageKitPrograms.programName(ofProcess: 0) == nil)
        #expect(PackageKitPrograms.programName(ofProcess: UInt32(Int32.max)) == nil, "no such process")
    }

    @Test func desktopEntriesNameTheProgramsTheyRun() throws {
        let directory = NSTemporaryDirectory() + "netactivity-entries-" + UUID().uuidString.prefix(8)
        let first = directory + "/first"
        let second = directory + "/second"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let entries = [
            "\(first)/org.gnome.Software.desktop": "[Desktop Entry]\nName=Software\nExec=gnome-software %U\n",
            "\(first)/gnome-software-local-file.desktop": "[Desktop Entry]\nNoDisplay=true\nExec=gnome-software --local-filename %f\n",
            "\(first)/a-hidden-discover.desktop": "[Desktop Entry]\nHidden=true\nExec=plasma-discover\n",
            "\(second)/org.kde.discover.desktop": "[Desktop Entry]\nExec=/usr/bin/plasma-discover %F\n",
            "\(second)/org.example.Env.desktop": "[Desktop Entry]\nExec=env GTK_THEME=Adwaita LANG=C \"/opt/tool/bin/updater\" --now\n",
            "\(second)/org.example.TryExec.desktop": "[Desktop Entry]\nTryExec=/usr/libexec/helper\nExec=sh -c helper\n",
            "\(second)/org.example.Group.desktop": "[Desktop Action Other]\nExec=grouped\n[Desktop Entry]\nExec=ungrouped\n",
            "\(second)/org.example.Long.desktop": "[Desktop Entry]\nExec=" + String(repeating: "x", count: 10_000) + "\n",
            "\(second)/not a desktop id.desktop": "[Desktop Entry]\nExec=spaced\n",
            "\(second)/org.example.Other.txt": "[Desktop Entry]\nExec=textfile\n",
            "\(second)/org.example.Flatpak.desktop":
                "[Desktop Entry]\nExec=/usr/bin/flatpak run --branch=stable --command=flatpaked org.example.Flatpak\n",
        ]
        for path in [first, second] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        for (path, text) in entries { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        func id(_ program: String) -> String? { PackageKitPrograms.desktopID(forProgram: program, in: [first, second]) }

        #expect(id("gnome-software") == "org.gnome.Software", "the entry shown in menus wins")
        #expect(id("plasma-discover") == "org.kde.discover", "a hidden entry only when no other")
        #expect(id("updater") == "org.example.Env", "after env and its assignments, unquoted")
        #expect(id("helper") == "org.example.TryExec")
        #expect(id("ungrouped") == "org.example.Group")
        #expect(id("grouped") == nil, "only the [Desktop Entry] group counts")
        #expect(id("spaced") == nil)
        #expect(id("textfile") == nil)
        #expect(id(String(repeating: "x", count: 10_000)) == nil)
        #expect(id("pkcon") == nil)
        #expect(id("flatpaked") == "org.example.Flatpak", "a Flatpak's --command")
        #expect(id("flatpak") == nil)
        #expect(PackageKitPrograms.desktopID(forProgram: "gnome-software", in: [directory + "/missing"]) == nil)
    }

    @Test func onlyPlainNamesAreNames() {
        #expect(PackageKitPrograms.isPlainName("gnome-software"))
        #expect(PackageKitPrograms.isPlainName("python3.11"))
        #expect(PackageKitPrograms.isPlainName("g++"))
        #expect(!PackageKitPrograms.isPlainName(""))
        #expect(!PackageKitPrograms.isPlainName(".hidden"))
        #expect(!PackageKitPrograms.isPlainName("a b"))
        #expect(!PackageKitPrograms.isPlainName("evil\u{1B}[31m"))
        #expect(!PackageKitPrograms.isPlainName(String(repeating: "x", count: 256)))
    }
}
