import BusTestSupport
import Foundation
import NetActivityTestSupport
import Testing

/// A page whose examples `ReadmeTests` checks.
struct ExamplePage: Sendable, CustomStringConvertible {
    var path: String
    /// Whether the built programs are on `PATH` for its `sh` blocks, as after `make install`.
    /// The README's blocks find them themselves, in `.build/static/release`, as after `make run`.
    var programsOnPath: Bool

    var description: String { path }

    func blocks() throws -> [FencedBlock] {
        fencedBlocks(in: try Repository.text(path), page: path)
    }
}

/// The README's and the docs pages' examples work as written: read from the pages themselves,
/// by the fences' info strings (docs/development.md, "The examples in the docs"). `sh` blocks
/// run line by line against the real netactivityd on a private bus standing in for the session
/// bus; `swift` blocks compile, and the one followed by a `text` block runs and prints it.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ReadmeTests {
    static let pages = [
        ExamplePage(path: "README.md", programsOnPath: false),
        ExamplePage(path: "docs/cli.md", programsOnPath: true),
        ExamplePage(path: "docs/library.md", programsOnPath: true),
        ExamplePage(path: "docs/panels.md", programsOnPath: true),
        ExamplePage(path: "docs/install.md", programsOnPath: true),
        ExamplePage(path: "docs/development.md", programsOnPath: true),
    ]
    /// Kinds shown and never run; anything else is a typo the test would otherwise skip.
    static let shownKinds: Set<String> = ["shell", "text", "json", "css", "ini"]

    // MARK: - The front door

    @Test func theReadmeIsShortAndNamesBothCommands() throws {
        let readme = try Repository.text("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= 150, "README.md has \(lines) lines")
        #expect(readme.contains("make run"))
        #expect(readme.contains("make test"))
        #expect(readme.contains(".build/static/release/netactivity"), "where make run leaves the CLI")
        #expect(readme.contains("export DBUS_SESSION_BUS_ADDRESS="), "how to reach make run's private bus")
    }

    @Test(arguments: pages)
    func everyBlockIsOfAKindThatIsCheckedOrShown(page: ExamplePage) throws {
        for block in try page.blocks() {
            #expect(
                ["sh", "swift"].contains(block.kind) || Self.shownKinds.contains(block.kind),
                "\(block) has a kind the test neither runs nor knows as shown-only")
        }
    }

    @Test(arguments: pages)
    func everyLinkLeadsToAFileAndHeading(page: ExamplePage) throws {
        let text = try Repository.text(page.path)
        let directory = (page.path as NSString).deletingLastPathComponent
        for match in text.matches(of: /\]\(([^)\s]+)\)/) {
            let target = String(match.output.1)
            guard !target.contains("://") else { continue }
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let file = parts[0].isEmpty ? page.path : (directory as NSString).appendingPathComponent(String(parts[0]))
            let linked = (file as NSString).standardizingPath
            #expect(FileManager.default.fileExists(atPath: Repository.path(linked)), "\(page): \(target)")
            if parts.count == 2, linked.hasSuffix(".md"), let anchors = try? headingAnchors(in: Repository.text(linked)) {
                #expect(anchors.contains(String(parts[1])), "\(page): no heading for \(target) in \(linked)")
            }
        }
    }

    // MARK: - Shell

    @Test(arguments: pages)
    func shellBlocksPrintWhatTheirCommentsShow(page: ExamplePage) throws {
        let steps = try page.blocks().filter { $0.kind == "sh" }.flatMap(shellSteps)
        guard !steps.isEmpty else { return }
        try requireTool("busctl")
        // The defaults, as `make run` starts it.
        let service = try ServiceDaemon([])
        let scratch = try ScratchDirectory("readme-sh")
        let programs = URL(fileURLWithPath: try builtProduct("netactivity")).deletingLastPathComponent().path
        // What `make run` leaves at the top of a checkout, for the README's `$PWD/.build/static/release`.
        try FileManager.default.createDirectory(
            atPath: scratch.path + "/.build/static", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path + "/.build/static/release", withDestinationPath: programs)

        // One shell for the page, as a reader pastes it into one terminal; after each command a
        // record separator marks where its output ends.
        var script = "exec 2>&1\ncd '\(scratch.path)'\n"
        if page.programsOnPath { script += "export PATH='\(programs)':\"$PATH\"\n" }
        for step in steps { script += step.command + "\nprintf '\\036'\n" }
        let result = try run("bash", ["-c", script], environment: service.bus.sessionEnvironment, timeout: .seconds(120))
        let outputs = result.stdout.split(separator: "\u{1E}", omittingEmptySubsequences: false)
        #expect(outputs.count == steps.count + 1, "the page's shell ended early: \(result)")
        for (step, output) in zip(steps, outputs) {
            let printed = output.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.trimmed(of: " \t")
            }
            let lines = printed.last == "" ? Array(printed.dropLast()) : printed
            #expect(lines == step.expected, "\(step) printed \(lines), the page shows \(step.expected)")
        }
    }

    /// The private bus `make run` starts where there is no session bus, and the line it prints
    /// for other terminals, have the form the README shows.
    @Test func makeRunPrintsTheExportLineTheReadmeShows() throws {
        try requireTool("dbus-daemon")
        let shown = try #require(
            try Self.pages[0].blocks().first { $0.kind == "text" && $0.text.contains("DBUS_SESSION_BUS_ADDRESS") },
            "README.md shows no make run output")
        let runtime = try ScratchDirectory("readme-run")
        // `true` stands in for netactivityd: it exits at once, and the script stops its bus.
        let result = try run(
            Repository.path("scripts/run-service.sh"), ["/bin/true"],
            environment: ["XDG_RUNTIME_DIR": runtime.path], timeout: .seconds(30))
        #expect(result.exitStatus == 0, "\(result)")
        func shape(_ text: String) -> [String] {
            nonEmptyLines(
                text.replacing(/'unix:[^']*'/, with: "'ADDRESS'").replacing(/pid [0-9]+/, with: "pid PID"))
        }
        let printed = shape(result.stdout)
        #expect(Array(printed.prefix(shown.lines.count)) == shape(shown.text), "run-service.sh printed \(result.stdout)")
        // The address it printed is the bus it started, and that bus is gone with the service.
        let address = try #require(result.stdout.firstMatch(of: /export DBUS_SESSION_BUS_ADDRESS='([^']*)'/)?.output.1)
        let gone = try run("busctl", ["--address=\(address)", "status"], timeout: .seconds(10))
        #expect(!gone.succeeded, "make run's private bus outlived the service")
    }

    // MARK: - Swift

    @Test(arguments: pages)
    func swiftBlocksCompile(page: ExamplePage) throws {
        let blocks = try page.blocks().filter { $0.kind == "swift" }
        guard !blocks.isEmpty else { return }
        let compiler = try SwiftCompiler()
        for block in blocks {
            let scratch = try ScratchDirectory("readme-swift")
            let result = try compiler.typecheck(block, in: scratch)
            #expect(result.succeeded, "\(block) does not compile:\n\(result)\n\(block.text)")
        }
    }

    @Test(arguments: pages)
    func swiftBlocksFollowedByTheirOutputPrintIt(page: ExamplePage) throws {
        let blocks = try page.blocks()
        let programs = zip(blocks, blocks.dropFirst()).filter { $0.0.kind == "swift" && $0.1.kind == "text" }
        guard !programs.isEmpty else { return }
        let compiler = try SwiftCompiler()
        let service = try ServiceDaemon([])
        for (program, output) in programs {
            let scratch = try ScratchDirectory("readme-swift-run")
            let executable = scratch.path + "/example"
            let built = try compiler.build(program, to: executable, in: scratch)
            try #require(built.succeeded, "\(program) does not build:\n\(built)")
            let result = try run(executable, [], environment: service.bus.sessionEnvironment, timeout: .seconds(30))
            #expect(result.exitStatus == 0, "\(program): \(result)")
            let expected = output.text
            #expect(result.stdout == expected, "\(program) printed \(result.stdout), \(output) shows \(expected)")
        }
    }
}

/// GitHub's anchors for the headings of a Markdown page: lower case, punctuation dropped,
/// blanks made hyphens.
func headingAnchors(in markdown: String) -> Set<String> {
    Set(
        markdown.split(separator: "\n").filter { $0.hasPrefix("#") }.map { heading in
            let title = heading.drop { $0 == "#" }.trimmed(of: " ").lowercased()
            return String(
                title.compactMap { character -> Character? in
                    if character == " " { return "-" }
                    return character.isLetter || character.isNumber || character == "-" || character == "_"
                        ? character : nil
                })
        })
}

/// `swiftc` pointed at this build's modules: a nested `swift build` would wait for the .build
/// lock `swift test` holds, so examples are compiled with the compiler directly.
struct SwiftCompiler {
    /// Where the built modules (`NetActivity.swiftmodule`, ...) and each target's objects are.
    let products: String
    /// SwiftPM's manifest library, for a `Package.swift` block.
    let manifestAPI: String
    /// The flags that let clang find libdbus's headers under CDBus's module map, and the
    /// kernel's under CLinux's.
    let cDBusFlags: [String]

    /// Objects a program linked against the client library needs: its target and those it uses,
    /// as `Package.swift` says.
    static func clientTargets() throws -> [String] {
        PackageTargets.linked(["NetActivity"], in: try Repository.text("Package.swift"))
    }

    init() throws {
        try requireTool("swiftc")
        try requireTool("pkg-config")
        products = URL(fileURLWithPath: try builtProduct("netactivity")).deletingLastPathComponent().path
        let info = try run("swiftc", ["-print-target-info"])
        let resources = try #require(
            info.stdout.firstMatch(of: /"runtimeResourcePath": "([^"]+)"/)?.output.1, "swiftc -print-target-info: \(info)")
        manifestAPI = resources + "/pm/ManifestAPI"
        let cflags = try run("pkg-config", ["--cflags", "dbus-1"])
        try #require(cflags.succeeded, "pkg-config --cflags dbus-1: \(cflags)")
        cDBusFlags =
            ["-Xcc", "-fmodule-map-file=" + Repository.path("Sources/CDBus/module.modulemap")]
            + ["-Xcc", "-fmodule-map-file=" + Repository.path("Sources/CLinux/module.modulemap")]
            + cflags.stdout.split(whereSeparator: \.isWhitespace).flatMap { ["-Xcc", String($0)] }
    }

    func typecheck(_ block: FencedBlock, in scratch: ScratchDirectory) throws -> ProcessResult {
        let isManifest = block.text.contains("import PackageDescription")
        let source = try scratch.write(isManifest ? "Package.swift" : "main.swift", block.text)
        let flags =
            isManifest
            ? ["-I", manifestAPI, "-package-description-version", "6.0"]
            : ["-I", products + "/Modules"] + cDBusFlags
        return try run(
            "swiftc", ["-typecheck", "-swift-version", "6", "-warnings-as-errors"] + flags + [source],
            timeout: .seconds(120))
    }

    func build(_ block: FencedBlock, to executable: String, in scratch: ScratchDirectory) throws -> ProcessResult {
        let source = try scratch.write("main.swift", block.text)
        let objects = try Self.clientTargets().flatMap { target in
            let directory = products + "/\(target).build"
            return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".o") }
                .sorted().map { directory + "/" + $0 }
        }
        return try run(
            "swiftc",
            ["-swift-version", "6", "-I", products + "/Modules"] + cDBusFlags + [source] + objects
                + ["-ldbus-1", "-o", executable],
            timeout: .seconds(180))
    }
}
