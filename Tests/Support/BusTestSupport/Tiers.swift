import Foundation
import Testing

/// The two tiers of tests. The unit tier is pure: no bus, no child process, no network
/// namespace, nothing but the code and files of its own, so it runs in parallel, in under a
/// minute (`make check`). The system tier runs the real programs (dbus-daemon, netactivityd,
/// browsers, shells in tmux, packagekitd, namespaces): every suite of it is marked
/// `@Suite(.system, .tags(.system), .timeLimit(...))`, and runs one test at a time in
/// `make test`.
public enum TestTier {
    /// `NETACTIVITY_TESTS=unit` (what `make check` sets) leaves the system tier out.
    public static let runsSystemTests = ProcessInfo.processInfo.environment["NETACTIVITY_TESTS"] != "unit"

    /// The sanitizer the tests and the programs they run are built with, as the sanitizer
    /// passes say in `NETACTIVITY_SANITIZER`; nil in the plain build.
    public static let sanitizer = ProcessInfo.processInfo.environment["NETACTIVITY_SANITIZER"].flatMap(Sanitizer.init)
}

/// A sanitizer a pass of `make test` builds with.
public enum Sanitizer: String, Sendable {
    case address, thread
}

extension Tag {
    /// A system test: real buses, daemons, browsers, shells or namespaces.
    @Tag public static var system: Self
}

extension Trait where Self == ConditionTrait {
    /// Runs only where the system tier does: skipped by `make check`.
    public static var system: Self {
        .enabled(if: TestTier.runsSystemTests, "a system test: make check runs the unit tier alone")
    }

    /// Left out of the pass built with `sanitizer`: for a test whose point that sanitizer adds
    /// nothing to and whose cost it multiplies. Every other pass runs it.
    public static func skipped(under sanitizer: Sanitizer, _ why: Comment) -> Self {
        .disabled(if: TestTier.sanitizer == sanitizer, why)
    }
}
