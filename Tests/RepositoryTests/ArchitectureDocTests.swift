import Foundation
import Testing

/// `docs/architecture.md`'s layer tables say what `Package.swift` says: a row for every target
/// that is not a test target, its last column naming exactly the target's dependencies, each
/// row below the rows of what it depends on. A failure names the row to add or the names to
/// change, written as the table wants them.
@Suite struct ArchitectureDocTests {
    @Test func layerTableHasEveryTargetWithItsDependencies() throws {
        let problems = LayerTable.problems(
            package: try Repository.text("Package.swift"), architecture: try Repository.text(LayerTable.page))
        #expect(problems.isEmpty, "\(LayerTable.page) is out of step with Package.swift:\n\(problems.joined(separator: "\n"))")
    }

    /// The check itself: a target added to the manifest without a row, a dependency added
    /// without its name in the row, and a row for a target the manifest no longer has.
    @Test func layerTableCheckNamesWhatIsMissing() throws {
        let package = try Repository.text("Package.swift")
        let architecture = try Repository.text(LayerTable.page)
        let added = package.replacingOccurrences(
            of: "    targets: [\n",
            with: "    targets: [\n        .target(name: \"NetActivityExample\", dependencies: [\"NetActivity\", \"DBus\"]),\n")
        #expect(added != package, "Package.swift no longer opens its targets with `    targets: [`")
        let missing = LayerTable.problems(package: added, architecture: architecture)
        #expect(missing.count == 1 && missing.first?.contains("| `NetActivityExample` |") == true, "\(missing)")
        #expect(missing.first?.contains("`NetActivity`, `DBus` |") == true, "\(missing)")

        let moreDependencies = package.replacingOccurrences(
            of: ".executableTarget(name: \"netactivityd\", dependencies: [\"NetActivityService\"])",
            with: ".executableTarget(name: \"netactivityd\", dependencies: [\"NetActivityService\", \"Locking\"])")
        #expect(moreDependencies != package, "Package.swift no longer declares netactivityd as this test expects")
        let stale = LayerTable.problems(package: moreDependencies, architecture: architecture)
        #expect(stale.count == 1 && stale.first?.contains("`netactivityd`") == true
                && stale.first?.contains("`Locking`") == true, "\(stale)")

        let removed = LayerTable.problems(
            package: package.replacingOccurrences(of: "name: \"DownloadCenter\"", with: "name: \"Downloads\""),
            architecture: architecture)
        #expect(removed.contains { $0.contains("`DownloadCenter`") && $0.contains("no such target") }, "\(removed)")
        #expect(removed.contains { $0.contains("| `Downloads` |") }, "\(removed)")
    }

    @Test func manifestParserReadsNamesAndDependencies() {
        let manifest = """
            // A comment with .target(name: "Commented") in it.
            .systemLibrary(name: "CLib", pkgConfig: "lib"),
            .target(name: "A", dependencies: ["CLib", .product(name: "P", package: "p")], path: "Sources/A (x)"),
            .executableTarget(
                name: "b-tool",
                dependencies: [
                    "A", // the library
                    .target(name: "CLib"),
                ]),
            .testTarget(name: "ATests", dependencies: ["A"]),
            """
        let targets = PackageTargets.parse(manifest)
        #expect(targets.map(\.name) == ["CLib", "A", "b-tool"])
        #expect(targets.map(\.dependencies) == [[], ["CLib"], ["A", "CLib"]])
        #expect(PackageTargets.linked(["b-tool"], in: manifest) == ["A", "b-tool"])
    }
}

/// The rows of the tables under `## The layers` in `docs/architecture.md`: a target's name (the
/// first cell, in backticks) and the targets its last cell names (in backticks).
enum LayerTable {
    static let page = "docs/architecture.md"
    static let section = "## The layers"

    struct Row {
        var target: String
        var dependencies: [String]
        /// The row's line in the page (1-based), for messages.
        var line: Int
    }

    static func rows(of architecture: String) -> [Row] {
        var rows: [Row] = []
        var inSection = false
        for (offset, line) in architecture.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("## ") { inSection = line == section }
            guard inSection, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let target = names(in: cells[0]).first else { continue }
            rows.append(Row(target: target, dependencies: names(in: cells[cells.count - 1]), line: offset + 1))
        }
        return rows
    }

    /// What disagrees between the manifest and the tables, one sentence each; empty when they agree.
    static func problems(package: String, architecture: String) -> [String] {
        let targets = PackageTargets.parse(package)
        let rows = rows(of: architecture)
        var problems: [String] = []
        if rows.isEmpty { problems.append("\(page) has no table under '\(section)'") }
        let declared = Set(targets.map(\.name))
        var rowsByTarget: [String: Row] = [:]
        for row in rows {
            if rowsByTarget[row.target] != nil {
                problems.append("\(page):\(row.line): a second row for `\(row.target)`")
            }
            rowsByTarget[row.target] = row
            if !declared.contains(row.target) {
                problems.append("\(page):\(row.line): a row for `\(row.target)`, but Package.swift has no such target: remove the row")
            }
        }
        for target in targets {
            let expected = row(for: target)
            guard let row = rowsByTarget[target.name] else {
                let anchor = target.dependencies.compactMap { rowsByTarget[$0] }.max { $0.line < $1.line }
                let place = anchor.map { "below the row of `\($0.target)` (line \($0.line))" } ?? "in the table"
                problems.append(
                    "no row for `\(target.name)` (Package.swift: .\(target.kind)); add, \(place):\n\(expected)")
                continue
            }
            let missing = target.dependencies.filter { !row.dependencies.contains($0) }
            let extra = row.dependencies.filter { !target.dependencies.contains($0) }
            if !missing.isEmpty || !extra.isEmpty {
                var said: [String] = []
                if !missing.isEmpty { said.append("does not name \(listed(missing))") }
                if !extra.isEmpty { said.append("names \(listed(extra)), which Package.swift does not list") }
                problems.append(
                    "\(page):\(row.line): the row of `\(target.name)` \(said.joined(separator: " and ")); "
                        + "its last column should read: \(dependencyCell(target))")
            }
            for dependency in target.dependencies {
                if let above = rowsByTarget[dependency], above.line > row.line {
                    problems.append(
                        "\(page):\(row.line): `\(target.name)` depends on `\(dependency)`, whose row (line \(above.line)) "
                            + "is below it; each target's row comes below the rows of what it depends on")
                }
            }
        }
        return problems
    }

    /// The row a target should have, with a place-holder for its description.
    static func row(for target: PackageTarget) -> String {
        "| `\(target.name)` | WHAT IT IS | \(dependencyCell(target)) |"
    }

    static func dependencyCell(_ target: PackageTarget) -> String {
        target.dependencies.isEmpty ? "nothing" : listed(target.dependencies)
    }

    private static func listed(_ names: [String]) -> String {
        names.map { "`\($0)`" }.joined(separator: ", ")
    }

    /// The backticked names of a cell.
    private static func names(in cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
