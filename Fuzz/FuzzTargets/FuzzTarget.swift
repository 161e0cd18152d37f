/// One fuzz target: a parser of bytes from outside, reached through the entry point the
/// product itself uses. Defined once here, so the libFuzzer executables (`Fuzz/NAME/`) and the
/// regression test (`FuzzRegressionTests`, which replays every corpus file and kept crash on the
/// unfuzzed build) run exactly the same code.
///
/// A target must never crash on any input: a trap here is a bug in the product (or an
/// invariant the target checks, said in its own `precondition`).
public struct FuzzTarget: Sendable {
    /// The target's name: its folder under `Fuzz/`, `Fuzz/corpus/` and `Fuzz/regressions/`,
    /// and its executable `fuzz-NAME`.
    public let name: String
    /// Feeds one input through the parser.
    public let run: @Sendable ([UInt8]) -> Void

    public init(_ name: String, _ run: @escaping @Sendable ([UInt8]) -> Void) {
        self.name = name
        self.run = run
    }

    /// libFuzzer's `LLVMFuzzerTestOneInput`: the input as bytes, always 0 (keep it in the
    /// corpus if it is new).
    public func callAsFunction(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }
}

extension FuzzTarget {
    /// Every target, in the order `make fuzz` runs them. A new one is added here, as
    /// `Fuzz/NAME/Fuzzer.swift`, in Package.swift, the Makefile's `FUZZ_TARGETS` and
    /// docs/development.md.
    public static let all: [FuzzTarget] = [
        .sockDiag, .interfaceCounters, .json, .nativeMessaging, .desktopEntry, .applicationUnit, .procFS,
        .launcherUpdate, .packageKit, .shellHelper, .dbusMessage, .unitFile, .plasmaJobs,
    ]
}
