import NetActivity

/// The commands the shell integration holds an activity for, and the kind each one gets.
///
/// Written in `NETACTIVITY_SHELL_COMMANDS` as a comma-separated list of entries: a command name,
/// optionally one subcommand, optionally `=KIND` (download, upload, sync, update, other;
/// `other` when left out). The entry `defaults` stands for the default list, so
/// `defaults, yt-dlp=download, rclone sync=sync` adds to it. Unset or blank means the defaults.
/// A command name matches the command's last path component (`/usr/bin/curl` is `curl`); a
/// subcommand matches the first later word that is not an option (`docker --debug pull`).
struct ShellCommands: Equatable {
    /// One entry: `git push=upload`.
    struct Entry: Equatable {
        var command: String
        var subcommand: String?
        var kind: ActivityHints.Kind
    }

    var entries: [Entry]

    /// The environment variable that changes the list.
    static let variable = "NETACTIVITY_SHELL_COMMANDS"

    static let defaultText =
        "curl=download, wget=download, git clone=download, git fetch=download, git pull=download, "
        + "git push=upload, rsync=sync, scp=upload, sftp=other, apt=download, apt-get=download, "
        + "pip=download, pip3=download, npm=download, cargo=download, docker pull=download"

    static let defaults: ShellCommands = {
        var list = ShellCommands(entries: [])
        for entry in defaultText.split(separator: ",") {
            // The default text is ours and valid; a mistake in it would show as a missing entry in the tests.
            if case .success(let parsed) = parse(entry: Substring(entry)) { list.entries += parsed }
        }
        return list
    }()

    /// Parses the variable's value. Entries that cannot be used are left out and described in
    /// `problems`, one line each: the hook is installed from a shell's startup file, where a
    /// typo should cost that entry, not the whole integration.
    static func parse(_ text: String?) -> (commands: ShellCommands, problems: [String]) {
        guard let text, text.contains(where: { !$0.isWhitespace }) else { return (defaults, []) }
        var list = ShellCommands(entries: [])
        var problems: [String] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch parse(entry: entry) {
            case .success(let parsed):
                for item in parsed where !list.entries.contains(where: { $0.command == item.command && $0.subcommand == item.subcommand }) {
                    list.entries.append(item)
                }
            case .failure(let problem):
                problems.append(problem.description)
            }
        }
        return (list, problems)
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    private static func parse(entry: Substring) -> Result<[Entry], Problem> {
        let trimmed = entry.trimmingSpaces
        if trimmed.isEmpty { return .success([]) }
        if trimmed == "defaults" { return .success(defaults.entries) }
        var words = trimmed
        var kind = ActivityHints.Kind.other
        if let equals = trimmed.firstIndex(of: "=") {
            let name = trimmed[trimmed.index(after: equals)...].trimmingSpaces
            guard let chosen = ActivityHints.Kind(rawValue: String(name)) else {
                let kinds = ActivityHints.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(Problem(description: "\(variable): '\(PrintableText.printable(trimmed))' left out: the kind is one of \(kinds)"))
            }
            kind = chosen
            words = trimmed[..<equals].trimmingSpaces
        }
        let parts = words.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard (1...2).contains(parts.count), parts.allSatisfy(isWord) else {
            return .failure(
                Problem(
                    description:
                        "\(variable): '\(PrintableText.printable(trimmed))' left out: an entry is a command, optionally one subcommand, optionally =KIND"
                ))
        }
        return .success([Entry(command: String(parts[0]), subcommand: parts.count == 2 ? String(parts[1]) : nil, kind: kind)])
    }

    /// Characters a word may hold: none that is special inside the single quotes the scripts
    /// put it in (bash, zsh and fish alike), nor a wildcard (fish's `case` reads one even
    /// quoted), nor a separator of the list itself.
    private static func isWord(_ word: Substring) -> Bool {
        !word.isEmpty && !word.hasPrefix("-")
            && word.unicodeScalars.allSatisfy { scalar in
                scalar.value > 0x20 && scalar.value != 0x7F && !(0x80...0x9F).contains(scalar.value)
                    && !"'\"\\,=*?[]".unicodeScalars.contains(scalar)
            }
    }
}
