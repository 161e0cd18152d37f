@testable import NetActivityCLI

extension FuzzTarget {
    /// What a shell writes to its `netactivity shell-helper`: lines, each a `begin` or an `end`,
    /// cut and read as the helper's loop reads them.
    public static let shellHelper = FuzzTarget("shell-helper") { bytes in
        var reader = LineReader(maximumBytes: ShellHelper.maximumLineBytes)
        // In two reads, so that a line may straddle them as it does off a pipe.
        let middle = bytes.count / 2
        for line in reader.lines(in: bytes[..<middle]) + reader.lines(in: bytes[middle...]) {
            _ = ShellHelperLine(line)
        }
    }
}
