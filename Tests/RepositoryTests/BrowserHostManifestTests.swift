import BusTestSupport
import Foundation
import NetActivityContract
import Testing

/// The browsers' host manifests three ways: `netactivity browser-host --install-manifests`
/// (per user, by hand), `make install` and the .deb (both from `browser-extension/host/*.in`)
/// write the same manifests, naming a wrapper that runs the host; and the extension's ids in
/// them are the extension's own; `make browser-extension` packs it.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct BrowserHostManifestTests {
    @Test func installManifestsWritesWhatTheTemplatesSay() throws {
        let home = try ScratchDirectory("browser-manifests")
        let netactivity = try builtProduct("netactivity")
        let result = try run(netactivity, ["browser-host", "--install-manifests"], environment: ["HOME": home.path])
        #expect(result.exitStatus == 0 && result.stderr.isEmpty, "\(result)")
        let wrapper = home.path + "/.local/lib/netactivity/netactivity-browser-host"
        let written = [
            (".mozilla/native-messaging-hosts", "firefox"), (".config/chromium/NativeMessagingHosts", "chromium"),
            (".config/google-chrome/NativeMessagingHosts", "chromium"),
        ]
        #expect(nonEmptyLines(result.stdout) == [wrapper] + written.map { home.path + "/" + $0.0 + "/io.github.netactivity.browser.json" })
        for (directory, flavor) in written {
            let manifest = try String(
                contentsOfFile: home.path + "/" + directory + "/io.github.netactivity.browser.json", encoding: .utf8)
            let template = try Repository.text("browser-extension/host/\(flavor).json.in")
            #expect(manifest == template.replacingOccurrences(of: "@path@", with: wrapper), "\(directory)")
        }
        let script = try String(contentsOfFile: wrapper, encoding: .utf8)
        let template = try Repository.text("browser-extension/host/netactivity-browser-host.in")
        // The by-hand wrapper runs the netactivity that wrote it; make's runs the installed one.
        let resolved = URL(fileURLWithPath: netactivity).resolvingSymlinksInPath().path
        #expect(script == template.replacingOccurrences(of: "@bindir@/netactivity", with: resolved))
        let help = try run(wrapper, ["--help"])
        #expect(help.exitStatus == 0 && help.stdout.hasPrefix("Usage: netactivity browser-host"), "\(help)")
    }

    @Test func braveAndVivaldiGetOneWhereTheyAreInstalled() throws {
        let home = try ScratchDirectory("browser-manifests")
        try FileManager.default.createDirectory(
            atPath: home.path + "/.config/BraveSoftware/Brave-Browser", withIntermediateDirectories: true)
        let result = try run(try builtProduct("netactivity"), ["browser-host", "--install-manifests"], environment: ["HOME": home.path])
        #expect(result.stdout.contains("/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts/io.github.netactivity.browser.json"))
        #expect(!result.stdout.contains("vivaldi"))
    }

    @Test func theManifestsNameTheExtensionsOwnIds() throws {
        let manifest = try JSONSerialization.jsonObject(with: Data(Repository.text("browser-extension/manifest.json").utf8))
            as? [String: Any]
        let gecko = (manifest?["browser_specific_settings"] as? [String: Any])?["gecko"] as? [String: Any]
        let firefoxID = try #require(gecko?["id"] as? String)
        #expect(try Repository.text("browser-extension/host/firefox.json.in").contains(#"["\#(firefoxID)"]"#))
        // Chromium's id: the first 128 bits of the SHA-256 of the key, each hex digit 0-f as a-p.
        let key = try #require(manifest?["key"] as? String)
        let digest = try run("sh", ["-c", "base64 -d | sha256sum"], input: key)
        let id = String(digest.stdout.prefix(32).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0.hexDigitValue!))) })
        #expect(try Repository.text("browser-extension/host/chromium.json.in").contains("chrome-extension://\(id)/"))
        #expect(manifest?["permissions"] as? [String] == ["downloads", "nativeMessaging"])
        #expect(manifest?["version"] as? String == NetActivityBus.version, "the extension's version is NetActivity's")
    }

    @Test func makeBrowserExtensionPacksTheExtensionAloneAndTheStoreZipWithoutItsKey() throws {
        let out = try ScratchDirectory("browser-extension")
        let packed = try run("python3", [Repository.path("browser-extension/pack.py"), out.path])
        #expect(packed.exitStatus == 0, "\(packed)")
        let listing = try run("python3", ["-c", """
            import json, sys, zipfile
            for path in sys.argv[1:]:
                archive = zipfile.ZipFile(path)
                print(path.rsplit(".", 1)[1], " ".join(archive.namelist()), "key" in json.loads(archive.read("manifest.json")))
            """, out.path + "/netactivity-\(NetActivityBus.version).zip", out.path + "/netactivity-\(NetActivityBus.version).xpi"])
        #expect(listing.stdout == "zip manifest.json background.js False\nxpi manifest.json background.js True\n", "\(listing)")
    }
}
