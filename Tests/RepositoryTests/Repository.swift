import BusTestSupport
import Foundation

/// The checked-out repository these tests read: its scripts, docs, man pages and completions.
enum Repository {
    /// The repository's top directory, found from this file's place in it
    /// (`Tests/RepositoryTests/Repository.swift`).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of `relativePath` inside the repository.
    static func path(_ relativePath: String) -> String {
        root.appendingPathComponent(relativePath).path
    }

    /// The text of a file in the repository.
    static func text(_ relativePath: String) throws -> String {
        try String(contentsOfFile: path(relativePath), encoding: .utf8)
    }
}

/// A directory under the system's temporary directory, removed when the value is released.
final class ScratchDirectory {
    let url: URL

    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("netactivity-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    /// Writes `text` to `name` inside the directory, executable when asked.
    @discardableResult
    func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        if executable {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        }
        return file.path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// The lines of `text`, without empty ones.
func nonEmptyLines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init)
}
