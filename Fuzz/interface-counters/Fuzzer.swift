import FuzzTargets

/// libFuzzer's entry point; the target is defined in FuzzTargets (`FuzzTarget.interfaceCounters`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzTarget.interfaceCounters(data, size)
}
