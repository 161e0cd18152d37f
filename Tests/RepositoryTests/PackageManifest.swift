import Foundation

/// One target as `Package.swift` declares it.
struct PackageTarget: Equatable {
    var name: String
    /// The kind as written: `target`, `executableTarget` or `systemLibrary`.
    var kind: String
    /// The other targets of this package it depends on, in the manifest's order (products of
    /// other packages left out).
    var dependencies: [String]
}

/// The targets of a manifest, read as text: each `.target(`, `.executableTarget(` and
/// `.systemLibrary(` with its `name:` and the strings of its `dependencies: [...]`.
enum PackageTargets {
    static let kinds = ["target", "executableTarget", "systemLibrary"]

    /// `names` and every target they depend on, directly or not, that has objects to link
    /// (system libraries left out), in the manifest's order.
    static func linked(_ names: [String], in manifest: String) -> [String] {
        let targets = parse(manifest)
        var wanted = Set<String>()
        var pending = names
        while let name = pending.popLast() {
            guard wanted.insert(name).inserted, let target = targets.first(where: { $0.name == name }) else { continue }
            pending += target.dependencies
        }
        return targets.filter { wanted.contains($0.name) && $0.kind != "systemLibrary" }.map(\.name)
    }

    static func parse(_ manifest: String) -> [PackageTarget] {
        let text = Array(withoutComments(manifest))
        var targets: [PackageTarget] = []
        var index = 0
        while index < text.count {
            guard text[index] == ".", let (kind, open) = call(in: text, at: index) else {
                index += 1
                continue
            }
            let close = matchingParenthesis(in: text, from: open)
            let arguments = String(text[(open + 1)..<close])
            if kind != "testTarget", kinds.contains(kind), let name = firstString(after: "name:", in: arguments) {
                targets.append(PackageTarget(name: name, kind: kind, dependencies: dependencies(in: arguments)))
            }
            // A declaration's arguments hold no other declaration (a `.target(name:)` among
            // dependencies is one), so reading goes on after it.
            index = close + 1
        }
        return targets
    }

    /// `.NAME(` at `index`: the name and the parenthesis's position.
    private static func call(in text: [Character], at index: Int) -> (String, Int)? {
        var end = index + 1
        while end < text.count, text[end].isLetter { end += 1 }
        guard end < text.count, text[end] == "(", end > index + 1 else { return nil }
        let name = String(text[(index + 1)..<end])
        return (kinds + ["testTarget"]).contains(name) ? (name, end) : nil
    }

    /// The position of the `)` closing the `(` at `open`, skipping strings.
    private static func matchingParenthesis(in text: [Character], from open: Int) -> Int {
        var depth = 0
        var inString = false
        var index = open
        while index < text.count {
            let character = text[index]
            if inString {
                if character == "\\" { index += 1 } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                depth -= 1
                if depth == 0 { return index }
            }
            index += 1
        }
        return text.count
    }

    /// The targets named in `dependencies: [...]`: plain strings and `.target(name:)` /
    /// `.byName(name:)`; `.product(...)` belongs to another package.
    private static func dependencies(in arguments: String) -> [String] {
        guard let start = arguments.range(of: "dependencies:"),
            let open = arguments[start.upperBound...].firstIndex(of: "[")
        else { return [] }
        let list = Array(arguments[arguments.index(after: open)...])
        var depth = 1
        var end = 0
        var inString = false
        while end < list.count {
            let character = list[end]
            if inString {
                if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "[" {
                depth += 1
            } else if character == "]" {
                depth -= 1
                if depth == 0 { break }
            }
            end += 1
        }
        var body = String(list[..<min(end, list.count)])
        while let product = body.range(of: ".product(") {
            let characters = Array(body)
            let open = body.distance(from: body.startIndex, to: product.upperBound) - 1
            let close = matchingParenthesis(in: characters, from: open)
            body = String(characters[..<body.distance(from: body.startIndex, to: product.lowerBound)])
                + String(characters[min(close + 1, characters.count)...])
        }
        return strings(in: body)
    }

    private static func firstString(after label: String, in text: String) -> String? {
        guard let range = text.range(of: label) else { return nil }
        return strings(in: String(text[range.upperBound...])).first
    }

    /// Every string literal of `text`, in order.
    private static func strings(in text: String) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// `text` without `//` comments (outside string literals).
    private static func withoutComments(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var inString = false
            var previous: Character?
            for index in line.indices {
                let character = line[index]
                if character == "\"" { inString.toggle() }
                if !inString, character == "/", previous == "/" {
                    return line[..<line.index(before: index)]
                }
                previous = character
            }
            return line
        }.joined(separator: "\n")
    }
}
