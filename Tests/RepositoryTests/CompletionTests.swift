import BusTestSupport
import Foundation
import Testing

/// What bash's completion for `netactivity` offers after `words`, the last being the one completed.
func bashCompletions(_ words: [String]) throws -> [String] {
    let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    let script = """
        source '\(Repository.path("completions/netactivity.bash"))'
        COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
        COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
        _netactivity
        printf '%s\\n' "${COMPREPLY[@]}"
        """
    let result = try run("bash", ["--norc", "--noprofile", "-c", script])
    guard result.exitStatus == 0, result.stderr.isEmpty else { throw BusTestError("bash completion failed: \(result)") }
    return nonEmptyLines(result.stdout)
}

/// The completions in `completions/` offer what `netactivity --help` lists, and bash's works.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct CompletionTests {
    let help: String
    let commands: [String]

    init() throws {
        help = try run(try builtProduct("netactivity"), ["--help"]).stdout
        commands = commandsListed(in: help)
    }

    @Test func bashCompletesTheCommands() throws {
        #expect(commands.count >= 8)
        #expect(Set(try bashCompletions(["netactivity", ""])) == Set(commands))
        #expect(try bashCompletions(["netactivity", "wa"]) == ["watch"])
        #expect(try bashCompletions(["netactivity", "--system", "st"]) == ["status"])
        #expect(try bashCompletions(["netactivity", "--address", "unix:path=/tmp/bus", "pu"]) == ["push"])
        #expect(Set(try bashCompletions(["netactivity", "help", ""])) == Set(commands))
    }

    @Test func bashCompletesTheGlobalOptions() throws {
        let offered = Set(try bashCompletions(["netactivity", "--"]))
        let global = optionsListed(in: helpSection("Global options:", in: help)).filter { $0.hasPrefix("--") }
        #expect(global.count >= 4, "global options read from --help: \(global)")
        #expect(offered == global, "offered \(offered.sorted()), --help lists \(global.sorted())")
    }

    @Test func bashCompletesEachCommandsOptions() throws {
        let binary = try builtProduct("netactivity")
        for command in commands where command != "help" && command != "version" {
            let listed = optionsListed(in: try run(binary, [command, "--help"]).stdout)
                .filter { $0.hasPrefix("--") && $0 != "--system" && $0 != "--address" }
            let offered = Set(try bashCompletions(["netactivity", command, "--"]))
            #expect(listed.isSubset(of: offered), "\(command): offered \(offered.sorted()), --help lists \(listed.sorted())")
        }
        #expect(try bashCompletions(["netactivity", "watch", "--format", ""]) == ["plain", "json", "waybar"])
        #expect(try bashCompletions(["netactivity", "run", "--label", "x", "--", "bas"]).contains("bash"))
    }

    @Test(arguments: ["completions/_netactivity", "completions/netactivity.fish"])
    func zshAndFishNameEveryCommandAndOption(file: String) throws {
        let text = try Repository.text(file)
        let binary = try builtProduct("netactivity")
        var options = optionsListed(in: help)
        for command in commands where command != "help" && command != "version" {
            options.formUnion(optionsListed(in: try run(binary, [command, "--help"]).stdout))
        }
        for command in commands {
            #expect(text.contains(command), "\(file) does not offer \(command)")
        }
        for option in options {
            let bare = option.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
            #expect(text.contains(bare), "\(file) does not offer \(option)")
        }
    }
}
