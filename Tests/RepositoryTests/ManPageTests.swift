import BusTestSupport
import Foundation
import NetActivityContract
import Testing

/// What a program's `--help` lists: its options (`--system`, `-h`, …).
func optionsListed(in help: String) -> Set<String> {
    Set(help.matches(of: /(?:^|[^\w-])(--?[a-z][a-z-]*)/).map { String($0.output.1) })
}

/// The lines of a help text's section, from its heading ("Commands:") to the next blank line.
func helpSection(_ heading: String, in help: String) -> String {
    guard let start = help.range(of: heading + "\n") else { return "" }
    return help[start.upperBound...].components(separatedBy: "\n\n")[0]
}

/// The commands `netactivity --help` lists under "Commands:".
func commandsListed(in help: String) -> [String] {
    helpSection("Commands:", in: help).split(separator: "\n").compactMap { line in
        line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
    }
}

/// The help texts of a program: its own and, for `netactivity`, each command's.
func helpTexts(_ product: String) throws -> [String] {
    let binary = try builtProduct(product)
    let main = try run(binary, ["--help"])
    guard product == "netactivity" else { return [main.stdout] }
    return try [main.stdout] + commandsListed(in: main.stdout).filter { $0 != "help" && $0 != "version" }
        .map { try run(binary, [$0, "--help"]).stdout }
}

/// The man pages in `man/` render with `man -l` and describe every option `--help` lists.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ManPageTests {
    static let pages = [("netactivityd", "man/netactivityd.8"), ("netactivity", "man/netactivity.1")]

    func render(_ page: String) throws -> ProcessResult {
        try requireTool("man")
        // Plain text: no pager, no overstrike, ASCII hyphens.
        return try run("man", ["--warnings", "-P", "cat", "-l", Repository.path(page)],
                       environment: ["LC_ALL": "C", "MANWIDTH": "100", "MAN_KEEP_FORMATTING": ""])
    }

    @Test(arguments: pages)
    func rendersWithNameSynopsisAndEveryOption(product: String, page: String) throws {
        let rendered = try render(page)
        #expect(rendered.exitStatus == 0, "\(rendered)")
        #expect(rendered.stderr.isEmpty, "groff warnings: \(rendered.stderr)")
        let text = rendered.stdout.replacing(/.\x08/, with: "")
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"] {
            #expect(text.contains("\n\(heading)\n"), "\(page) has no \(heading) section")
        }
        #expect(text.contains("\(product) - "), "\(page)'s NAME line")
        for help in try helpTexts(product) {
            for option in optionsListed(in: help) {
                #expect(text.contains(option), "\(page) does not mention \(option), which --help lists")
            }
        }
    }

    @Test func theManPageNamesEveryCommand() throws {
        let help = try run(try builtProduct("netactivity"), ["--help"]).stdout
        let commands = commandsListed(in: help)
        #expect(commands.count >= 8, "commands read from --help: \(commands)")
        let text = try render("man/netactivity.1").stdout.replacing(/.\x08/, with: "")
        for command in commands {
            #expect(text.contains("netactivity \(command)") || text.contains("\n       \(command)"),
                    "netactivity(1) does not describe \(command)")
        }
    }
}

/// `--version` of both programs prints `NetActivityBus.version`, the service's `Version`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct VersionTests {
    @Test(arguments: [
        ("netactivityd", ["--version"]), ("netactivity", ["--version"]), ("netactivity", ["version"]),
    ])
    func printsTheOneVersion(product: String, arguments: [String]) throws {
        let result = try run(try builtProduct(product), arguments)
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout == "\(product) \(NetActivityBus.version)\n", "\(result)")
    }
}
