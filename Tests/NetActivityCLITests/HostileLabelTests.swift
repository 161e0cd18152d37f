import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import Testing

/// Labels from any program on the bus come out of every output of the command line with none
/// of the code points the one rule for text (`PrintableText`) keeps from a person: a terminal's
/// C0 and C1 controls, bidirectional overrides, other format characters.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct HostileLabelTests {
    static let labels = [
        "\u{9B}31mC1 CSI", "\u{1B}]0;retitled\u{07}\u{1B}[2JESC", "invoice\u{202E}fdp.exe", "zero\u{200B}\u{2066}width\u{FEFF}",
        "line\u{2028}separator", "del\u{7F}",
    ]

    /// The code points of `text` that should never have come out, as hexadecimal.
    static func hostile(in text: String) -> [String] {
        text.split(separator: "\n").flatMap { line in
            line.unicodeScalars.filter { PrintableText.treatment(of: $0) != .keep }.map { String($0.value, radix: 16) }
        }
    }

    @Test func noOutputShowsAHostileCodePoint() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for label in Self.labels {
            let hints = Value.dictionary(key: "s", value: "v", [(.string(NetActivityBus.Hint.kind), .variant(.string("download")))])
            let id = try #require(try client.call(NetActivityBus.Member.beginActivityWithHints, [.string(label), hints]).first?.uint32)
            try client.call("UpdateActivity", [.uint32(id), .uint64(1_000), .uint64(4_000)])
        }
        try waitUntil("Visible") { try client.property("Visible").bool == true }

        var outputs: [(String, String)] = []
        for arguments in [["status"], ["status", "--json"]] {
            let result = try service.netactivity(arguments)
            #expect(result.exitStatus == 0, "\(result)")
            outputs.append((arguments.joined(separator: " "), result.stdout))
        }
        let top = try run(
            try builtProduct("netactivity"), ["--address", service.address, "top", "--once"], environment: ["COLUMNS": "200"])
        #expect(top.exitStatus == 0, "\(top)")
        outputs.append(("top --once", top.stdout))
        for format in ["plain", "json", "waybar"] {
            let watch = try service.startNetactivity(["watch", "--format", format])
            var reader = WatchReader(watch)
            outputs.append(("watch --format \(format)", try reader.next()))
        }

        for (command, output) in outputs {
            #expect(Self.hostile(in: output).isEmpty, "\(command) printed \(Self.hostile(in: output)): \(output)")
        }
        // What the labels say still shows, in the JSON whole.
        #expect(outputs[0].1.contains("?31mC1 CSI") && outputs[0].1.contains("invoicefdp.exe"), "\(outputs[0].1)")
        let json = try jsonObject(outputs[1].1)
        let labels = (json["activities"] as? [[String: Any]])?.compactMap { $0["label"] as? String }
        #expect(Set(labels ?? []) == Set(Self.labels))
        #expect(outputs[2].1.contains("invoicefdp.exe"), "\(outputs[2].1)")
        #expect(try jsonObject(outputs[5].1)["tooltip"] as? String != nil)
    }
}
