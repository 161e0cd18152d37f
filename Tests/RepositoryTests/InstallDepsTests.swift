import BusTestSupport
import Foundation
import Testing

/// A box for `scripts/install-deps.sh` to run on: a `PATH` holding only `bash`, a fake `id`, the
/// tools the box "has", and (when asked) fake `apt-get`, `apt-cache` and `sudo` that record what
/// would be installed instead of installing it.
struct FakeBox {
    /// The commands the box has (each a stub that succeeds), by name.
    var tools: Set<String> = FakeBox.everyTool
    /// The pkg-config modules `pkg-config --exists` finds.
    var pkgConfigModules: Set<String> = ["dbus-1"]
    /// The packages `apt-cache policy` offers a candidate for.
    var archive: Set<String> = FakeBox.bookworm
    var hasAptGet = true
    var hasSudo = true
    var uid = 0

    /// Every tool the script looks for, so that a box with all of them lacks nothing.
    static let everyTool: Set<String> = [
        "pkg-config", "dbus-daemon", "dbus-send", "dbus-monitor", "busctl", "gdbus", "man",
        "dbus-test-tool", "cc", "lintian", "dpkg-shlibdeps", "strip", "pkcon", "zsh", "fish", "tmux", "curl", "python3", "strace",
        "ip", "nsenter", "setpriv", "chromium", "firefox-esr",
    ]
    /// Debian 12: dbus split into dbus-daemon and dbus-bin (and `dbus` kept as a metapackage).
    static let bookworm: Set<String> = [
        "pkg-config", "libdbus-1-dev", "dbus", "dbus-daemon", "dbus-bin", "systemd", "libglib2.0-bin",
        "man-db", "binutils", "dbus-tests", "gcc", "lintian", "dpkg-dev", "packagekit-tools", "python3-dbusmock", "zsh", "fish", "tmux", "curl", "python3", "strace",
        "iproute2", "util-linux", "chromium", "firefox-esr",
    ]
    /// Debian 11 and older Ubuntu: one `dbus` package with the daemon and the tools.
    static let bullseye = bookworm.subtracting(["dbus-daemon", "dbus-bin"])

    /// What a run did: its result, and the apt-get command lines it ran, in order.
    struct Outcome {
        var result: ProcessResult
        var aptGetCalls: [String]
    }

    func run(_ arguments: [String] = []) throws -> Outcome {
        let box = try ScratchDirectory("install-deps")
        let bin = box.url.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("bash").path,
                                                   withDestinationPath: "/bin/bash")
        let log = box.url.appendingPathComponent("apt-get.log").path
        try box.write("bin/id", "#!/bin/bash\necho \(uid)\n", executable: true)
        for tool in tools where tool != "pkg-config" {
            try box.write("bin/\(tool)", "#!/bin/bash\nexit 0\n", executable: true)
        }
        if tools.contains("pkg-config") {
            let modules = pkgConfigModules.sorted().joined(separator: " ")
            try box.write("bin/pkg-config", """
                #!/bin/bash
                [ "$1" = --exists ] && [[ " \(modules) " == *" $2 "* ]]
                """, executable: true)
        }
        if hasAptGet {
            // apt-cache writes a long version table after the candidate, as the real one does
            // for a package with many versions: a reader that stops at the first match would
            // kill it with SIGPIPE.
            let packages = archive.sorted().joined(separator: " ")
            try box.write("bin/apt-cache", """
                #!/bin/bash
                [ "$1" = policy ] || exit 100
                echo "$2:"
                echo "  Installed: (none)"
                if [[ " \(packages) " == *" $2 "* ]]; then
                    echo "  Candidate: 1.0-1"
                else
                    echo "  Candidate: (none)"
                fi
                echo "  Version table:"
                for i in $(seq 1 20000); do echo "     1.0-$i 500 http://deb.debian.org/debian bookworm/main amd64 Packages"; done
                """, executable: true)
            try box.write("bin/apt-get", """
                #!/bin/bash
                if [ "$(id -u)" != 0 ] && [ -z "${FAKE_SUDO:-}" ]; then
                    echo "E: Could not open lock file - are you root?" >&2
                    exit 100
                fi
                echo "${FAKE_SUDO:+sudo }apt-get $*" >> \(log)
                """, executable: true)
        }
        if hasSudo {
            try box.write("bin/sudo", "#!/bin/bash\nFAKE_SUDO=1 exec \"$@\"\n", executable: true)
        }
        // `seq` for the fake apt-cache's version table.
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("seq").path,
                                                   withDestinationPath: "/usr/bin/seq")
        let result = try BusTestSupport.run(
            Repository.path("scripts/install-deps.sh"), arguments, environment: ["PATH": bin.path],
            timeout: .seconds(60))
        let calls = (try? String(contentsOfFile: log, encoding: .utf8)).map(nonEmptyLines) ?? []
        return Outcome(result: result, aptGetCalls: calls)
    }
}

private let install = "apt-get install -y -q --no-install-recommends"

/// `scripts/install-deps.sh`, run for real against a fake apt: what it would install, and that it
/// touches apt only when something is missing.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct InstallDepsTests {
    @Test func nothingMissingTouchesNoApt() throws {
        let outcome = try FakeBox().run()
        #expect(outcome.result.exitStatus == 0, "\(outcome.result)")
        #expect(outcome.aptGetCalls.isEmpty)
        #expect(outcome.result.stdout == "deps: everything needed is installed\n")
    }

    @Test func aFreshBookwormBoxGetsOneUpdateAndOneInstallOfEverything() throws {
        var box = FakeBox()
        box.tools = []
        box.pkgConfigModules = []
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 0, "\(outcome.result)")
        #expect(outcome.aptGetCalls == [
            "apt-get update -q",
            "\(install) pkg-config libdbus-1-dev dbus-daemon dbus-bin systemd libglib2.0-bin man-db binutils packagekit-tools zsh fish tmux curl python3 strace gcc iproute2 util-linux chromium firefox-esr",
        ])
    }

    @Test func onlyTheMissingAreInstalled() throws {
        var box = FakeBox()
        box.tools.subtract(["busctl", "gdbus", "man"])
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 0, "\(outcome.result)")
        #expect(outcome.aptGetCalls == ["apt-get update -q", "\(install) systemd libglib2.0-bin man-db"])
    }

    @Test func theLibraryIsCheckedThroughPkgConfig() throws {
        var box = FakeBox()
        box.pkgConfigModules = []
        let outcome = try box.run()
        #expect(outcome.aptGetCalls == ["apt-get update -q", "\(install) libdbus-1-dev"], "\(outcome.result)")
    }

    @Test func bookwormGetsDbusDaemonAndDbusBin() throws {
        var box = FakeBox()
        box.tools.subtract(["dbus-daemon", "dbus-send", "dbus-monitor"])
        let outcome = try box.run()
        #expect(outcome.aptGetCalls == ["apt-get update -q", "\(install) dbus-daemon dbus-bin"], "\(outcome.result)")
    }

    @Test func olderReleasesGetOneDbusPackage() throws {
        var box = FakeBox()
        box.tools.subtract(["dbus-daemon", "dbus-send", "dbus-monitor"])
        box.archive = FakeBox.bullseye
        let outcome = try box.run()
        #expect(outcome.aptGetCalls == ["apt-get update -q", "\(install) dbus"], "\(outcome.result)")
    }

    @Test func withoutRootItGoesThroughSudo() throws {
        var box = FakeBox()
        box.uid = 1000
        box.tools.remove("gdbus")
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 0, "\(outcome.result)")
        #expect(outcome.aptGetCalls == ["sudo apt-get update -q", "sudo \(install) libglib2.0-bin"])
    }

    @Test func withoutRootOrSudoItSaysSoInOneLine() throws {
        var box = FakeBox()
        box.uid = 1000
        box.hasSudo = false
        box.tools.remove("gdbus")
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 1, "\(outcome.result)")
        #expect(nonEmptyLines(outcome.result.stderr).count == 1, "\(outcome.result)")
        #expect(outcome.result.stderr.contains("libglib2.0-bin") && outcome.result.stderr.contains("root"))
        #expect(outcome.aptGetCalls.isEmpty)
    }

    @Test func withoutAptGetItSaysSoInOneLine() throws {
        var box = FakeBox()
        box.hasAptGet = false
        box.tools.remove("busctl")
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 1, "\(outcome.result)")
        #expect(nonEmptyLines(outcome.result.stderr).count == 1, "\(outcome.result)")
        #expect(outcome.result.stderr.contains("apt-get") && outcome.result.stderr.contains("systemd"))
    }

    @Test func aPackageTheArchiveLacksIsNamed() throws {
        var box = FakeBox()
        box.tools.remove("gdbus")
        box.archive.remove("libglib2.0-bin")
        let outcome = try box.run()
        #expect(outcome.result.exitStatus == 1, "\(outcome.result)")
        #expect(outcome.aptGetCalls == ["apt-get update -q"])
        #expect(nonEmptyLines(outcome.result.stderr).count == 1, "\(outcome.result)")
        #expect(outcome.result.stderr.contains("libglib2.0-bin"))
    }

    @Test func benchAndDebModesAddTheirTools() throws {
        var box = FakeBox()
        box.tools.subtract(["dbus-test-tool", "lintian", "dpkg-shlibdeps"])
        let plain = try box.run()
        #expect(plain.aptGetCalls.isEmpty, "\(plain.result)")
        let bench = try box.run(["bench"])
        #expect(bench.aptGetCalls == ["apt-get update -q", "\(install) dbus-tests"], "\(bench.result)")
        // `make deb` installs only what it uses; lintian is for `make test-deb`'s check alone.
        let deb = try box.run(["deb"])
        #expect(deb.aptGetCalls == ["apt-get update -q", "\(install) dpkg-dev"], "\(deb.result)")
        let testDeb = try box.run(["test-deb"])
        #expect(testDeb.aptGetCalls == ["apt-get update -q", "\(install) lintian dpkg-dev"],
                "\(testDeb.result)")
        let bad = try box.run(["everything"])
        #expect(bad.result.exitStatus == 2, "\(bad.result)")
        #expect(bad.aptGetCalls.isEmpty)
    }
}

/// Scripts and Makefile recipes run under `set -o pipefail`; there a pipeline into a reader that
/// exits early (`grep -q`, `head`) fails when the writer is killed by SIGPIPE, which turns a match
/// into a failure at random. Read the writer's whole output first (`x=$(cmd)`, `sed -n 1p`).
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct PipefailTests {
    @Test func noPipelineEndsInAReaderThatExitsEarly() throws {
        let files = ["Makefile", ".ci/run"] + (try FileManager.default.contentsOfDirectory(
            atPath: Repository.path("scripts")).map { "scripts/" + $0 })
        let earlyExit = /\|\s*(grep\s+(-[A-Za-z]*q|--quiet|--silent)|head\b)/
        for file in files {
            let text = try Repository.text(file)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") && line.contains(earlyExit) {
                Issue.record("\(file):\(number + 1): a pipeline into an early-exiting reader: \(line)")
            }
        }
    }
}
