import BusTestSupport
import Foundation
import Testing

/// `make install` puts the man pages and completions where `man` and the shells look, and
/// `make uninstall` takes away everything it put.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct InstallTests {
    @Test func installedManPagesAndCompletionsAreFoundAndUninstalled() throws {
        try requireTool("make")
        let prefix = try ScratchDirectory("install")
        // NETACTIVITYD: install the debug build; a nested `swift build` would wait for SwiftPM's lock.
        // BROWSER_MANIFEST_HOME: the browsers' manifests go to a home of the test's, not the user's.
        let make = [
            "-C", Repository.root.path, "PREFIX=\(prefix.path)", "NETACTIVITYD=\(try builtProduct("netactivityd"))",
            "BROWSER_MANIFEST_HOME=\(prefix.path)/home",
        ]
        let install = try run("make", make + ["install"], timeout: .seconds(60))
        try #require(install.succeeded, "make install failed: \(install)")

        for file in [
            "bin/netactivity", "share/man/man1/netactivity.1", "share/man/man8/netactivityd.8",
            "share/bash-completion/completions/netactivity", "share/zsh/site-functions/_netactivity",
            "share/fish/vendor_completions.d/netactivity.fish", "lib/netactivity/netactivity-browser-host",
            "home/.mozilla/native-messaging-hosts/io.github.netactivity.browser.json",
            "home/.config/chromium/NativeMessagingHosts/io.github.netactivity.browser.json",
            "home/.config/google-chrome/NativeMessagingHosts/io.github.netactivity.browser.json",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix.path + "/" + file), "make install did not install \(file)")
        }
        // Stripped as the .deb's are: no symbol table left.
        for program in ["netactivityd", "netactivity"] {
            let sections = try run("readelf", ["-S", "-W", prefix.path + "/bin/" + program])
            #expect(sections.succeeded && !sections.stdout.contains(".symtab"), "\(program) is not stripped: \(sections)")
        }
        for page in ["netactivity", "netactivityd"] {
            let man = try run("man", ["-P", "cat", page],
                              environment: ["MANPATH": prefix.path + "/share/man", "LC_ALL": "C", "MANWIDTH": "80"])
            #expect(man.exitStatus == 0 && man.stdout.contains("SYNOPSIS"), "man \(page) after make install: \(man)")
        }

        // The manifests name the wrapper, which runs the installed netactivity as the host.
        let manifest = try String(
            contentsOfFile: prefix.path + "/home/.mozilla/native-messaging-hosts/io.github.netactivity.browser.json",
            encoding: .utf8)
        #expect(manifest.contains(#""path": "\#(prefix.path)/lib/netactivity/netactivity-browser-host""#), "\(manifest)")
        let help = try run(prefix.path + "/lib/netactivity/netactivity-browser-host", ["--help"])
        #expect(help.exitStatus == 0 && help.stdout.hasPrefix("Usage: netactivity browser-host"), "\(help)")

        let uninstall = try run("make", make + ["uninstall"], timeout: .seconds(60))
        try #require(uninstall.succeeded, "make uninstall failed: \(uninstall)")
        let left = FileManager.default.enumerator(atPath: prefix.path)?.compactMap { item -> String? in
            guard let item = item as? String else { return nil }
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: prefix.path + "/" + item, isDirectory: &isDirectory)
            return isDirectory.boolValue ? nil : item
        } ?? []
        #expect(left.isEmpty, "make uninstall left \(left)")
    }
}
