import BusTestSupport
import Foundation
import Testing

import DesktopApplications

#if canImport(Glibc)
import Glibc
#endif

/// Which application a process is: its program, and the desktop entry that runs it; what
/// entries say of themselves.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct DesktopEntriesTests {
    @Test func aProcessIsNamedByItsProgram() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        defer {
            child.send(signal: SIGKILL)
            _ = try? child.waitForExit(timeout: .seconds(5))
        }
        #expect(Processes().programName(ofProcess: UInt32(child.pid)) == "sleep")
        #expect(Processes().programName(ofProcess: 0) == nil)
        #expect(Processes().programName(ofProcess: UInt32(Int32.max)) == nil, "no such process")
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
        let installed = DesktopEntries(directories: [first, second])
        func id(_ program: String) -> String? { installed.desktopID(forProgram: program) }

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
        #expect(DesktopEntries(directories: [directory + "/missing"]).desktopID(forProgram: "gnome-software") == nil)
    }

    @Test func onlyPlainNamesAreNames() {
        #expect(DesktopEntries.isPlainName("gnome-software"))
        #expect(DesktopEntries.isPlainName("python3.11"))
        #expect(DesktopEntries.isPlainName("g++"))
        #expect(!DesktopEntries.isPlainName(""))
        #expect(!DesktopEntries.isPlainName(".hidden"))
        #expect(!DesktopEntries.isPlainName("a b"))
        #expect(!DesktopEntries.isPlainName("evil\u{1B}[31m"))
        #expect(!DesktopEntries.isPlainName(String(repeating: "x", count: 256)))
    }
}

/// What one entry says of itself, read by the one reader.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct DesktopEntryTests {
    @Test func anEntryIsReadFromItsOwnGroup() throws {
        let path = NSTemporaryDirectory() + "netactivity-entry-" + UUID().uuidString.prefix(8) + ".desktop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = """
            # comment
            [Desktop Action New]
            Name=New Window
            Icon=wrong
            [Desktop Entry]
            Name[de]=Dateien
            Name = Files\r
            Icon=org.gnome.Nautilus
            Exec=nautilus --new-window %U
            NoDisplay=false
            Name=Second

            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let entry = try #require(DesktopEntry(contentsOf: path))
        #expect(entry == DesktopEntry(name: "Files", icon: "org.gnome.Nautilus", exec: "nautilus --new-window %U"))
        #expect(entry.runs("nautilus"))
        #expect(!entry.runs("files"))

        try "no group at all\nName=x\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(DesktopEntry(contentsOf: path) == nil)
        try ("[Desktop Entry]\nName=" + String(repeating: "é", count: 200) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let long = try #require(DesktopEntry(contentsOf: path)?.name)
        #expect(long.utf8.count <= 128 && long.allSatisfy { $0 == "é" }, "cut on a character")
        #expect(DesktopEntry(contentsOf: path + ".missing") == nil)
    }

    @Test func entriesAreFoundByIdInTheDataDirectories() throws {
        let home = NSTemporaryDirectory() + "netactivity-data-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/applications", withIntermediateDirectories: true)
        try "[Desktop Entry]\nName=Fetcher\nIcon=network-transmit\nExec=fetcher\n"
            .write(toFile: home + "/applications/org.example.Fetcher.desktop", atomically: true, encoding: .utf8)
        let installed = DesktopEntries(directories: [home + "/applications"])
        #expect(installed.name(of: "org.example.Fetcher") == "Fetcher")
        #expect(installed.icon(of: "org.example.Fetcher") == "network-transmit")
        #expect(installed.application(forProgram: "fetcher") == "org.example.Fetcher")
        #expect(installed.application(forProgram: "curl-nobody-installs") == "curl-nobody-installs")
        #expect(installed.name(of: "../applications/org.example.Fetcher") == nil, "no paths")
        #expect(installed.name(of: "org.example.Missing") == nil)
    }

    @Test func theDirectoriesAreTheXDGOnes() {
        func directories(_ variables: [String: String]) -> [String] {
            DesktopEntries.applicationDirectories { variables[$0] }
        }
        #expect(directories(["HOME": "/home/a"]) == ["/home/a/.local/share/applications", "/usr/local/share/applications", "/usr/share/applications"])
        #expect(directories(["XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/x:/y"]) == ["/d/applications", "/x/applications", "/y/applications"])
        #expect(directories([:]) == ["/usr/local/share/applications", "/usr/share/applications"])
    }
}
