import Foundation
import Testing

/// The licence at the top of the repository is the one `debian/copyright` names, in Debian's
/// machine-readable format (DEP-5), with the same text, so the package says what users may do.
@Suite struct LicenseTests {
    @Test func licenseIsMIT() throws {
        let license = try Repository.text("LICENSE")
        #expect(license.hasPrefix("MIT License\n"), "LICENSE does not start with 'MIT License'")
        #expect(license.contains("Permission is hereby granted, free of charge"))
    }

    @Test func debianCopyrightIsMachineReadableAndNamesTheLicense() throws {
        let paragraphs = try Repository.text("debian/copyright")
            .components(separatedBy: "\n\n").map(Self.fields)
        try #require(paragraphs.count >= 3, "debian/copyright: a header, a Files and a License paragraph")
        #expect(paragraphs[0]["Format"] == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
        #expect(paragraphs[0]["Upstream-Name"] == "netactivity")

        let files = try #require(paragraphs.first { $0["Files"] == "*" }, "no 'Files: *' paragraph")
        // DEP-5's short name for the MIT licence is Expat.
        #expect(files["License"] == "Expat")
        #expect(files["Copyright"].map { !$0.isEmpty } == true, "the Files paragraph has no Copyright")

        let standalone = try #require(
            paragraphs.first { $0["Files"] == nil && $0["License"]?.hasPrefix("Expat\n") == true },
            "no stand-alone 'License: Expat' paragraph with the licence text")
        let text = standalone["License", default: ""].dropFirst("Expat\n".count)
        let license = try Repository.text("LICENSE")
        let permission = try #require(license.range(of: "Permission is hereby granted"))
        #expect(
            String(text) == license[permission.lowerBound...].trimmingCharacters(in: .whitespacesAndNewlines),
            "debian/copyright's Expat text differs from LICENSE")
    }

    /// A DEP-5 paragraph's fields: continuation lines joined with newlines, a lone "." an empty line.
    static func fields(_ paragraph: String) -> [String: String] {
        var fields: [String: String] = [:]
        var current: String?
        for line in paragraph.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(" "), let current {
                let content = line.dropFirst()
                fields[current, default: ""] += "\n" + (content == "." ? "" : content)
            } else if let colon = line.firstIndex(of: ":") {
                let name = String(line[..<colon])
                fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                current = name
            }
        }
        return fields
    }
}
