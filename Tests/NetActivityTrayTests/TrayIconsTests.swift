import Foundation
import NetActivityTray
import Testing

/// Where the tray tells hosts to find its icons (`IconThemePath`), and that the icons it names
/// are in the source tree where `make install` takes them from.
@Suite struct TrayIconsTests {
    /// A file system holding the active icon in the given icon folders.
    private func iconsIn(_ folders: String...) -> (String) -> Bool {
        { path in folders.contains { path == $0 + "/hicolor/scalable/status/io.github.netactivity.NetActivity-active.svg" } }
    }

    @Test(arguments: [
        // A build in a source tree, whichever scratch path and configuration.
        ("/src/netactivity/.build/x86_64-unknown-linux-gnu/debug/netactivity", "/src/netactivity/data/icons"),
        ("/src/netactivity/.build/static/x86_64-unknown-linux-gnu/release/netactivity", "/src/netactivity/data/icons"),
        // Installed: share/icons beside bin.
        ("/usr/bin/netactivity", "/usr/share/icons"),
        ("/home/ann/.local/bin/netactivity", "/home/ann/.local/share/icons"),
        ("/opt/netactivity/bin/netactivity", "/opt/netactivity/share/icons"),
    ])
    func theFolderHoldingTheIconsIsFoundFromTheExecutable(executable: String, folder: String) {
        let exists = iconsIn("/src/netactivity/data/icons", "/usr/share/icons", "/home/ann/.local/share/icons",
                             "/opt/netactivity/share/icons")
        #expect(TrayIcons.themePath(executable: executable, exists: exists) == folder)
    }

    @Test func aBuildWhoseTreeLacksTheIconsFallsBackToThePrefix() {
        // A build tree copied without data/: /src/netactivity/.build/share/icons is not a prefix
        // anyone installs to, so nothing is found.
        #expect(TrayIcons.themePath(executable: "/src/netactivity/.build/debug/netactivity", exists: iconsIn()) == "")
        #expect(
            TrayIcons.themePath(executable: "/src/x/.build/debug/netactivity", exists: iconsIn("/src/x/.build/share/icons"))
                == "/src/x/.build/share/icons")
    }

    @Test func nothingIsNamedWhereNoFolderHoldsTheIcons() {
        #expect(TrayIcons.themePath(executable: "/usr/bin/netactivity", exists: iconsIn()) == "")
        #expect(TrayIcons.themePath(executable: "netactivity", exists: { _ in true }) == "")
        #expect(TrayIcons.themePath(executable: "/netactivity", exists: { _ in true }) == "")
    }

    @Test func theDefaultsAreTheTraysOwnIcons() {
        #expect(TrayOptions().activeIcon == TrayIcons.active)
        #expect(TrayOptions().idleIcon == TrayIcons.idle)
    }

    /// Every name the tray offers is a small SVG in the source tree's hicolor folder, where the
    /// build tree's IconThemePath and `make install` find it.
    @Test(arguments: [TrayIcons.active, TrayIcons.idle, TrayIcons.activeSymbolic, TrayIcons.idleSymbolic])
    func eachIconIsAnSVGInTheSourceTree(name: String) throws {
        let tree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = tree.appendingPathComponent("data/icons/" + TrayIcons.file(name))
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">"))
        #expect(text.hasSuffix("</svg>\n"))
        // Symbolic icons take the panel's text colour (Plasma's stylesheet class; GTK recolours
        // any -symbolic name); the others keep their own colours.
        #expect(text.contains("ColorScheme-Text") == name.hasSuffix("-symbolic"))
    }
}
