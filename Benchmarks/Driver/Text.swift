import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// `value` with `decimals` digits after the point (no Foundation here).
func fixed(_ value: Double, _ decimals: Int = 2) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}

/// KiB as MiB with one decimal.
func mebibytes(_ kibibytes: UInt64) -> String { fixed(Double(kibibytes) / 1024, 1) + " MiB" }

/// A plain-text table whose columns are as wide as their widest cell; the first
/// `leftAligned` columns are left-aligned, the others right-aligned.
struct Table {
    var header: [String]
    var leftAligned: Int
    var rows: [[String]] = []

    init(_ header: [String], leftAligned: Int = 1) {
        self.header = header
        self.leftAligned = leftAligned
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    var text: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column < leftAligned ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }
}

/// Where the figures come from: cores, CPU model, kernel.
func machineDescription() -> String {
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    let model = (readProcFile("/proc/cpuinfo") ?? "").split(separator: "\n")
        .first { $0.hasPrefix("model name") }
        .flatMap { $0.split(separator: ":", maxSplits: 1).last }
        .map { $0.trimmingCharacters() } ?? "unknown CPU"
    var names = utsname()
    uname(&names)
    let release = withUnsafeBytes(of: names.release) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    let system = withUnsafeBytes(of: names.sysname) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    return "\(cores) cores (nproc), \(model), \(system) \(release)"
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// Prints a line on stdout at once, so the report shows while the benchmark runs under make.
func say(_ text: String) { writeLine(text, to: 1) }

/// Prints a line on stderr.
func complain(_ text: String) { writeLine(text, to: 2) }

private func writeLine(_ text: String, to descriptor: Int32) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { return }
            offset += written
        }
    }
}
