/// The code `netactivity shell-init SHELL` prints, for `eval` in a shell's startup file.
///
/// Every shell gets the same design: a hook before each command line and one before each
/// prompt; the match against the command list is done with the shell's own expansions and
/// `case`, so a command that is not on the list costs no fork; the first command that is
/// starts one helper (`netactivity shell-helper`) for the shell's lifetime, which owns the
/// activities and ends them when the shell dies. Lines go to it through a FIFO that bash and
/// zsh hold open read-write and unlink at once: a write never blocks on a missing reader nor
/// raises SIGPIPE in the shell, even when the helper is gone.
enum ShellScripts {
    /// The shells `shell-init` knows.
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// The code for `shell`, starting `helper` (the program and its bus options) lazily.
    static func text(for shell: Shell, commands: ShellCommands, helper: [String]) -> String {
        switch shell {
        case .bash: bash(commands: commands, helper: helper)
        case .zsh: zsh(commands: commands, helper: helper)
        case .fish: fish(commands: commands, helper: helper)
        }
    }

    // MARK: - The command table

    /// Commands in the order first listed, each with its entries.
    private static func grouped(_ commands: ShellCommands) -> [(command: String, entries: [ShellCommands.Entry])] {
        var groups: [(command: String, entries: [ShellCommands.Entry])] = []
        for entry in commands.entries {
            if let index = groups.firstIndex(where: { $0.command == entry.command }) {
                groups[index].entries.append(entry)
            } else {
                groups.append((entry.command, [entry]))
            }
        }
        return groups
    }

    /// `__netactivity_kind COMMAND SUBCOMMAND`: sets `__netactivity_found` to the kind, or fails.
    /// The words are checked by `ShellCommands` to need no escaping inside single quotes.
    static func posixKindFunction(_ commands: ShellCommands) -> String {
        var lines = ["__netactivity_kind() {", "    case $1 in"]
        for group in grouped(commands) {
            let plain = group.entries.first { $0.subcommand == nil }
            let subcommands = group.entries.filter { $0.subcommand != nil }
            if subcommands.isEmpty, let plain {
                lines.append("    '\(group.command)') __netactivity_found=\(plain.kind.rawValue) ;;")
                continue
            }
            lines.append("    '\(group.command)')")
            lines.append("        case $2 in")
            for entry in subcommands {
                lines.append("        '\(entry.subcommand ?? "")') __netactivity_found=\(entry.kind.rawValue) ;;")
            }
            lines.append("        *) " + (plain.map { "__netactivity_found=\($0.kind.rawValue)" } ?? "return 1") + " ;;")
            lines.append("        esac")
            lines.append("        ;;")
        }
        lines += ["    *) return 1 ;;", "    esac", "}"]
        return lines.joined(separator: "\n")
    }

    static func fishKindFunction(_ commands: ShellCommands) -> String {
        var lines = ["function __netactivity_kind", "    switch $argv[1]"]
        for group in grouped(commands) {
            let plain = group.entries.first { $0.subcommand == nil }
            let subcommands = group.entries.filter { $0.subcommand != nil }
            lines.append("        case '\(group.command)'")
            if subcommands.isEmpty, let plain {
                lines.append("            set -g __netactivity_found \(plain.kind.rawValue)")
                continue
            }
            lines.append("            switch \"$argv[2]\"")
            for entry in subcommands {
                lines.append("                case '\(entry.subcommand ?? "")'")
                lines.append("                    set -g __netactivity_found \(entry.kind.rawValue)")
            }
            lines.append("                case '*'")
            lines.append("                    " + (plain.map { "set -g __netactivity_found \($0.kind.rawValue)" } ?? "return 1"))
            lines.append("            end")
        }
        lines += ["        case '*'", "            return 1", "    end", "    return 0", "end"]
        return lines.joined(separator: "\n")
    }

    /// `word` in single quotes for bash and zsh.
    static func posixQuoted(_ word: String) -> String {
        "'" + word.replacing("'", with: #"'\''"#) + "'"
    }

    /// `word` in single quotes for fish, where a backslash escapes inside them too.
    static func fishQuoted(_ word: String) -> String {
        "'" + word.replacing(#"\"#, with: #"\\"#).replacing("'", with: #"\'"#) + "'"
    }
}
