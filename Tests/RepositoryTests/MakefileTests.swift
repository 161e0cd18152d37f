import BusTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the Makefile's targets would run (`make -n`): each needs only what it uses, builds what
/// answers first first, and builds both programs without a runtime in the toolchain.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct MakefileTests {
    /// `make -n TARGET`'s command lines.
    func dryRun(_ target: String, _ variables: [String] = []) throws -> [String] {
        try requireTool("make")
        let result = try run("make", ["-n", "-C", Repository.root.path, "--no-print-directory"] + variables + [target])
        try #require(result.succeeded, "make -n \(target): \(result)")
        return nonEmptyLines(result.stdout)
    }

    @Test func makeDebInstallsOnlyWhatItUses() throws {
        let deb = try dryRun("deb")
        #expect(deb.contains { $0.hasSuffix("install-deps.sh deb") }, "\(deb)")
        #expect(!deb.contains { $0.contains("test-deb") || $0.contains("lintian") }, "make deb: \(deb)")
        let testDeb = try dryRun("test-deb")
        #expect(testDeb.contains { $0.hasSuffix("install-deps.sh test-deb") }, "\(testDeb)")
    }

    @Test func releaseBuildsBothProgramsWithTheRuntimeStatic() throws {
        let builds = try dryRun("release").filter { $0.contains(" build ") && $0.contains("--product") }
        #expect(builds.count == 2, "\(builds)")
        for build in builds {
            #expect(build.contains("-Xswiftc -static-stdlib"), "\(build)")
            #expect(build.contains("--scratch-path .build/static"), "\(build)")
        }
        // make install copies those, and strips them as the .deb does.
        let install = try dryRun("install", ["PREFIX=/nonexistent"])
        #expect(install.contains { $0.contains("install -m 0755 \".build/static/release/netactivity\"") }, "\(install)")
        #expect(install.contains { $0.contains("strip --strip-unneeded") && $0.contains("/bin/netactivity\"") }, "\(install)")
    }

    /// The service is built and started before the command line is built.
    @Test func makeRunBuildsAndStartsTheServiceFirst() throws {
        let lines = try dryRun("run")
        let serviceBuild = try #require(lines.firstIndex { $0.contains("--product netactivityd") }, "\(lines)")
        let start = try #require(lines.firstIndex { $0.hasPrefix("scripts/run-service.sh") }, "\(lines)")
        #expect(serviceBuild < start)
        #expect(!lines[..<start].contains { $0.contains("--product netactivity ") || $0.hasSuffix("--product netactivity") },
                "the command line is built only once the service runs: \(lines)")
        #expect(lines[start].contains("--then '") && lines[start].contains("--product netactivity'"), "\(lines[start])")
    }

    /// run-service.sh --then: the command starts once the service answers, and is stopped with
    /// the service.
    @Test func runServiceStartsTheThenCommandOnceTheServiceAnswersAndStopsIt() throws {
        let scratch = try ScratchDirectory("run-service")
        let pidFile = scratch.path + "/then.pid"
        // Proves the service answers (a Ping to it on the bus the script started), then waits.
        let command = "dbus-send --session --print-reply --dest=io.github.netactivity.NetActivity1 "
            + "/io/github/netactivity/NetActivity1 org.freedesktop.DBus.Peer.Ping && echo $$ > \(pidFile) && exec sleep 60"
        let script = try ChildProcess(
            Repository.path("scripts/run-service.sh"),
            ["--then", command, "--then-built", "the waiter", "--then-log", scratch.path + "/then.log",
             try builtProduct("netactivityd")],
            // No session bus to find: the script starts a private one, never the user's.
            environment: ["XDG_RUNTIME_DIR": scratch.path])
        try waitUntil("the --then command to run after the service answered") {
            FileManager.default.fileExists(atPath: pidFile) && (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
        }
        let waiter = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .newlines)))
        #expect(script.stdoutText.contains("building the waiter in the background"), "\(script.stdoutText)")
        script.send(signal: SIGTERM)
        let result = try script.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        try waitUntil("the --then command to be stopped with the service") { kill(waiter, 0) != 0 || isZombie(waiter) }
    }

    private func isZombie(_ pid: pid_t) -> Bool {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
}
