/// A fenced code block of a Markdown page: its info string ("sh", "swift", "text", ...), its
/// lines, and where it starts, for failure messages.
struct FencedBlock: Sendable, CustomStringConvertible {
    var kind: String
    var lines: [String]
    /// The page's path in the repository and the line of the opening fence (1-based).
    var page: String
    var line: Int

    var text: String { lines.joined(separator: "\n") + "\n" }
    var description: String { "the \(kind) block at \(page):\(line)" }
}

/// The fenced blocks of `markdown` in order. A fence may be indented (a block inside a list
/// item); its lines lose that indentation.
func fencedBlocks(in markdown: String, page: String) -> [FencedBlock] {
    var blocks: [FencedBlock] = []
    var open: (block: FencedBlock, indent: Int)?
    for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let trimmed = line.drop { $0 == " " }
        let indent = line.count - trimmed.count
        if var current = open {
            if trimmed.hasPrefix("```") && trimmed.dropFirst(3).allSatisfy({ $0 == " " }) {
                blocks.append(current.block)
                open = nil
            } else {
                let dropped = line.prefix(current.indent).allSatisfy { $0 == " " } ? line.dropFirst(current.indent) : line[...]
                current.block.lines.append(String(dropped))
                open = current
            }
        } else if trimmed.hasPrefix("```") {
            let kind = trimmed.dropFirst(3).trimmed(of: " ")
            open = (FencedBlock(kind: kind, lines: [], page: page, line: index + 1), indent)
        }
    }
    return blocks
}

// MARK: - Shell blocks

/// One command of a `sh` block and what the page says it prints (stdout and stderr together).
struct ShellStep: Sendable, CustomStringConvertible {
    var command: String
    var expected: [String]
    var block: FencedBlock
    /// The command's line in the page (1-based).
    var line: Int

    var description: String { "`\(command)` (\(block.page):\(line))" }
}

/// The commands of a `sh` block with their expected output: the comment after a command, then
/// each comment line right below it, are what it prints; a comment line after a blank line (or
/// first in the block) explains and belongs to no command.
func shellSteps(of block: FencedBlock) -> [ShellStep] {
    var steps: [ShellStep] = []
    var collecting = false
    for (offset, line) in block.lines.enumerated() {
        let trimmed = line.trimmed(of: " ")
        if trimmed.isEmpty {
            collecting = false
        } else if trimmed.hasPrefix("#") {
            if collecting { steps[steps.count - 1].expected.append(commentText(trimmed)) }
        } else {
            let (command, comment) = splitComment(line)
            steps.append(
                ShellStep(
                    command: command, expected: comment.map { [$0] } ?? [], block: block,
                    line: block.line + 1 + offset))
            collecting = true
        }
    }
    return steps
}

/// A command line split at its trailing comment: a `#` after a blank, outside quotes.
private func splitComment(_ line: String) -> (command: String, comment: String?) {
    var quote: Character?
    var previous: Character = " "
    for index in line.indices {
        let character = line[index]
        if let open = quote {
            if character == open { quote = nil }
        } else if character == "'" || character == "\"" {
            quote = character
        } else if character == "#" && (previous == " " || previous == "\t") {
            let command = line[..<index].trimmed(of: " \t")
            return (command, commentText(String(line[index...])))
        }
        previous = character
    }
    return (line.trimmed(of: " \t"), nil)
}

/// A comment's text: without the `#` and the one blank after it.
private func commentText(_ comment: String) -> String {
    var text = comment.dropFirst()
    if text.first == " " { text = text.dropFirst() }
    return String(text)
}

extension StringProtocol {
    /// The text without leading and trailing characters from `characters`.
    func trimmed(of characters: String) -> String {
        let set = Set(characters)
        guard let first = firstIndex(where: { !set.contains($0) }),
            let last = lastIndex(where: { !set.contains($0) })
        else { return "" }
        return String(self[first...last])
    }
}
