import Foundation
import FuzzTargets
import Testing

/// Every fuzz target's seed corpus (`Fuzz/corpus/TARGET/`) and every crash a fuzzer found
/// (`Fuzz/regressions/TARGET/`), fed through the same entry points the fuzzers run, on the
/// plain build: a crash fixed stays fixed. Unit tier: files of its own, nothing started.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Fuzz").standardized

    static func inputs(of target: FuzzTarget, in folder: String) -> [URL] {
        let directory = fuzz.appending(path: folder).appending(path: target.name)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appending(path: $0) }
    }

    @Test(arguments: FuzzTarget.all.map(\.name))
    func corpusAndRegressions(target name: String) throws {
        let target = try #require(FuzzTarget.all.first { $0.name == name })
        let corpus = Self.inputs(of: target, in: "corpus")
        #expect(!corpus.isEmpty, "Fuzz/corpus/\(name) has no seed")
        for file in corpus + Self.inputs(of: target, in: "regressions") {
            target.run(Array(try Data(contentsOf: file)))
        }
    }

    /// Each target has its folder and its executable, and nothing in `Fuzz/` is left without one.
    @Test func everyTargetHasItsFolder() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.fuzz.path)
        let expected = Set(FuzzTarget.all.map(\.name))
        let extra = Set(folders).subtracting(expected).subtracting(["FuzzTargets", "corpus", "regressions", "dictionaries"])
        #expect(extra.isEmpty, "folders in Fuzz/ that are no target: \(extra.sorted())")
        for name in expected {
            #expect(FileManager.default.fileExists(atPath: Self.fuzz.appending(path: "\(name)/Fuzzer.swift").path))
        }
    }

    /// `make fuzz` runs every target, and Package.swift declares each one's executable.
    @Test func makefileAndManifestNameEveryTarget() throws {
        let root = Self.fuzz.deletingLastPathComponent()
        let makefile = try String(contentsOf: root.appending(path: "Makefile"), encoding: .utf8)
        let manifest = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        // `FUZZ_TARGETS := a b \` and its continuation lines.
        let start = try #require(makefile.range(of: "FUZZ_TARGETS :="))
        var listed: [String] = []
        for line in makefile[start.upperBound...].split(separator: "\n") {
            listed += line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\\" }).map(String.init)
            if !line.hasSuffix("\\") { break }
        }
        #expect(listed == FuzzTarget.all.map(\.name), "the Makefile's FUZZ_TARGETS and FuzzTarget.all differ")
        for target in FuzzTarget.all {
            #expect(manifest.contains(#"name: "fuzz-\#(target.name)""#), "Package.swift declares no fuzz-\(target.name)")
        }
    }
}
