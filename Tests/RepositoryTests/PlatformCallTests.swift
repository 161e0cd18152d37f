import Foundation
import Testing

/// The platform layer is the one seam to the C library, as `docs/architecture.md` says: its raw
/// calls sit in `Sources/Platform/Internals/`, each in a `system_` wrapper, and everything else
/// calls Swift types. A failure names the file, the line and the call to move behind a wrapper
/// (in the platform layer) or a platform type (anywhere else).
@Suite struct PlatformCallTests {
    @Test func platformTypesCallTheWrappersOnly() throws {
        let wrapped = try RawCalls.wrapped()
        #expect(wrapped.isSuperset(of: RawCalls.named), "no system_ wrapper for \(RawCalls.named.subtracting(wrapped).sorted())")
        let calls = try RawCalls.find(wrapped, under: RawCalls.platform, nullary: try RawCalls.nullary())
        #expect(
            calls.isEmpty, "C calls outside \(RawCalls.internals), each to go through its system_ wrapper:\n\(RawCalls.listed(calls))")
        // The wrappers retry what a signal interrupts, so no caller has to remember to.
        let retrying = try RawCalls.codeLines(under: RawCalls.platform).filter { $0.code.contains("retryingInterrupts") }
        #expect(
            retrying.isEmpty, "retryingInterrupts outside \(RawCalls.internals):\n\(retrying.map(\.description).joined(separator: "\n"))")
    }

    @Test func otherLayersLeaveTheWrappedCallsToThePlatform() throws {
        let names = RawCalls.named.union(try RawCalls.wrapped().subtracting(RawCalls.stillMadeElsewhere))
        let calls = try RawCalls.find(names, under: "Sources", nullary: try RawCalls.nullary())
        #expect(calls.isEmpty, "C calls the platform layer wraps, to make through its types:\n\(RawCalls.listed(calls))")
    }

    /// The check itself: the platform's calls as they were before the wrappers are found, and
    /// what only looks like them (a method, a declaration, a comment, a string) is not.
    @Test func matcherFindsCCallsAndNothingElse() {
        let before = """
            guard let stream = opendir(path) else { return nil }
            while entries.count < limit, let entry = readdir(stream) {
            let descriptor = retryingInterrupts { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
            retryingInterrupts { recv(descriptor.rawValue, bytes.baseAddress, bytes.count, flags) }
            guard isTerminal(descriptor), tcgetattr(descriptor, &value) == 0 else { return nil }
            let count = readlink(path, &buffer, buffer.count)
            clock_gettime(clock, &time)
            let joined = setsockopt(
            public var isCurrent: Bool { pthread_equal(pthread_self(), raw) != 0 }
            """
        let names = RawCalls.named.union(["setsockopt", "pthread_equal", "pthread_self"])
        let found = RawCalls.calls(of: names, in: before, nullary: ["pthread_self"])
        #expect(found.map(\.name) == [
            "opendir", "readdir", "open", "recv", "tcgetattr", "readlink", "clock_gettime", "setsockopt", "pthread_equal", "pthread_self",
        ])

        let lookalikes = #"""
            /// The corresponding C functions are `opendir`, `readdir` and `closedir`: opendir(path).
            // recv(descriptor, buffer, count, 0) would block here.
            let descriptor = try FileDescriptor.open(readOnly: path)
            thread.perform { work(open()) }
            public static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(Errno) -> FileDescriptor {
            read(CLOCK_MONOTONIC, unit: 1)
            let message = "open(path, flags) failed" // clock_gettime(clock, &time)
            let script = """
                open(file, mode) readdir(stream)
                """
            var status = stat(); descriptor.open(path, flags); reopen(path, flags)
            """#
        let mistaken = RawCalls.calls(of: RawCalls.named.union(["stat"]), in: lookalikes, nullary: ["pthread_self"])
        #expect(mistaken.isEmpty, "\(mistaken)")
    }
}

/// Where the C library is called: a call's name, unlabelled arguments (or none shown on its
/// line, as when they follow on the next; none at all only for a function that takes none), not
/// a method (`.open(`), a declaration or a Swift call with labels, outside comments and string
/// literals.
enum RawCalls {
    static let platform = "Sources/Platform"
    static let internals = "Sources/Platform/Internals"

    /// The calls no file outside the internals makes, whatever else changes: the directory,
    /// link, file, netlink, terminal and clock reads the platform layer is there for.
    static let named: Set<String> = ["opendir", "readdir", "readlink", "open", "recv", "tcgetattr", "clock_gettime"]

    /// Calls the platform wraps that other layers still make with their own C call: the D-Bus
    /// event loop's wake pipe, its `poll` with a timeout and its thread check (`pthread_self`);
    /// the process signals' handler, which must stay async-signal-safe; the last words programs
    /// write to standard error; the browser manifests' files; the D-Bus layer's look for a bus
    /// socket (`stat`); the wire encoder's buffer (`free`); `top` stopping itself on Ctrl-Z
    /// (`kill`). `read` and `write` also name methods and closures (the wire encoder's) that a
    /// line cannot tell from C's. Each leaves this list when its layer goes through the
    /// platform's types.
    static let stillMadeElsewhere: Set<String> = [
        "read", "write", "close", "poll", "stat", "access", "kill", "sigaction", "sigemptyset", "pthread_self", "free", "strerror",
    ]

    struct Call: Equatable, CustomStringConvertible {
        var file: String
        var line: Int
        var name: String
        var description: String { "\(file):\(line): \(name)(" }
    }

    struct CodeLine: CustomStringConvertible {
        var file: String
        var line: Int
        /// The line without its comment and with its string literals emptied.
        var code: String
        var description: String { "\(file):\(line): \(code.trimmingCharacters(in: .whitespaces))" }
    }

    /// The C functions `Internals/` wraps: the names after `system_` of its functions.
    static func wrapped() throws -> Set<String> {
        try wrappers(#"func system_(\w+)\("#)
    }

    /// Those of them that take no arguments, so that `()` after their name is a call.
    static func nullary() throws -> Set<String> {
        try wrappers(#"func system_(\w+)\(\)"#)
    }

    private static func wrappers(_ pattern: String) throws -> Set<String> {
        let declaration = try NSRegularExpression(pattern: pattern)
        var names: Set<String> = []
        for file in try swiftFiles(under: internals) {
            let text = try Repository.text(file) as NSString
            for match in declaration.matches(in: text as String, range: NSRange(location: 0, length: text.length)) {
                names.insert(text.substring(with: match.range(at: 1)))
            }
        }
        return names
    }

    /// The calls of `names` in the Swift files under `folder`, the internals left out.
    static func find(_ names: Set<String>, under folder: String, nullary: Set<String>) throws -> [Call] {
        try swiftFiles(under: folder).flatMap { file in
            calls(of: names, in: try Repository.text(file), nullary: nullary).map { Call(file: file, line: $0.line, name: $0.name) }
        }
    }

    static func calls(of names: Set<String>, in text: String, nullary: Set<String>) -> [(line: Int, name: String)] {
        let alternatives = names.sorted().map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|")
        // Not after a `.` (a method) or a letter (a longer name), not declared here; `Glibc.` is
        // how a type calls the C function its own method is named after.
        let call = try! NSRegularExpression(pattern: #"(?<![\w.])(?<!func )(?<!case )(?:Glibc\.)?("# + alternatives + #")\("#)
        var found: [(line: Int, name: String)] = []
        for line in codeLines(text) {
            let code = line.code as NSString
            for match in call.matches(in: line.code, range: NSRange(location: 0, length: code.length)) {
                let name = code.substring(with: match.range(at: 1))
                let arguments = code.substring(from: match.range.location + match.range.length)
                if unlabelled(arguments) || (nullary.contains(name) && arguments.hasPrefix(")")) { found.append((line.line, name)) }
            }
        }
        return found
    }

    /// Whether the arguments after a `(` are some and none has a label, as a C call's are:
    /// `open()` and `read(clock, unit: 1)` are Swift's. Only this line's part is looked at.
    static func unlabelled(_ text: String) -> Bool {
        var depth = 0
        var argument = ""
        var arguments: [String] = []
        for character in text {
            if depth == 0, character == ")" || character == "," {
                arguments.append(argument)
                argument = ""
                if character == ")" { break }
                continue
            }
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) { depth -= 1 }
            argument.append(character)
        }
        if !argument.isEmpty { arguments.append(argument) }
        if arguments.count == 1, arguments[0].allSatisfy(\.isWhitespace) { return false }
        return !arguments.contains { $0.range(of: #"^\s*\w+\s*:(?!:)"#, options: .regularExpression) != nil }
    }

    /// The lines of `text` that are code: comments cut off, string literals emptied, the lines
    /// inside a multi-line string literal left out.
    static func codeLines(_ text: String) -> [(line: Int, code: String)] {
        var lines: [(line: Int, code: String)] = []
        var inMultilineString = false
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var code = String(raw)
            let delimiters = code.components(separatedBy: #"""""#).count - 1
            if inMultilineString {
                guard delimiters > 0, let end = code.range(of: #"""""#, options: .backwards) else { continue }
                code = String(code[end.upperBound...])
                inMultilineString = delimiters % 2 == 0
            } else if delimiters % 2 == 1, let start = code.range(of: #"""""#) {
                code = String(code[..<start.lowerBound])
                inMultilineString = true
            }
            code = code.replacingOccurrences(of: #""(?:[^"\\]|\\.)*""#, with: #""""#, options: .regularExpression)
            if let comment = code.range(of: "//") { code = String(code[..<comment.lowerBound]) }
            lines.append((offset + 1, code))
        }
        return lines
    }

    static func codeLines(under folder: String) throws -> [CodeLine] {
        try swiftFiles(under: folder).flatMap { file in
            codeLines(try Repository.text(file)).map { CodeLine(file: file, line: $0.line, code: $0.code) }
        }
    }

    /// The Swift files under `folder`, as paths from the top of the repository, the platform's
    /// internals left out; sorted, so failures come in the same order.
    static func swiftFiles(under folder: String) throws -> [String] {
        let top = Repository.path(folder)
        let files = (FileManager.default.enumerator(atPath: top)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }.map { folder + "/" + $0 }
        #expect(!files.isEmpty, "no Swift files under \(folder)")
        return files.filter { folder == internals || !$0.hasPrefix(internals + "/") }.sorted()
    }

    static func listed(_ calls: [Call]) -> String {
        calls.map(\.description).joined(separator: "\n")
    }
}
