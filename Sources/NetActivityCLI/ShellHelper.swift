import NetActivity
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity shell-helper`: the one process per shell that owns the shell's activities.
///
/// The shell integration (`shell-init`) starts it at the first command on its list and writes
/// it one line per event:
///
///     begin KIND LABEL    begin an activity (KIND: download, upload, sync, update, other, or -)
///     end                 end it
///
/// A `begin` while one is held ends the earlier one: a shell runs one command line at a time.
/// Anything else is ignored; a line is cut at 1 KiB and its label, with control characters
/// made spaces, to the service's 256 bytes. It exits when the shell does (`--shell-pid`,
/// watched through a pidfd), or at the end of its input; its bus connection, and with it every
/// activity, goes then.
struct ShellHelper {
    var bus: Bus
    /// The shell to outlive by nothing.
    var shellPID: Int32?
    /// A FIFO to read instead of standard input (fish, which cannot hold a descriptor open),
    /// held open read-write and removed on exit.
    var fifo: String?

    /// Bytes of a line kept; the rest of a longer one is skipped. Far more than a label needs.
    static let maximumLineBytes = 1024

    func run() -> Int32 {
        // The shell's terminal signals are for its foreground job, never for its helper.
        for signo in [SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU] { signal(signo, SIG_IGN) }
        Self.closeInheritedDescriptors()
        guard let input = openInput() else { return 1 }
        defer { if let fifo { unlink(fifo) } }
        var watched = [input]
        if let shellPID {
            do {
                watched.append(try FileDescriptor.watching(process: shellPID))
            } catch .noSuchProcess {
                return 0
            } catch {
                // No pidfds (an old kernel or glibc): then, with standard input, its end is the
                // shell's end, but a FIFO has no end to wait for.
                if fifo != nil {
                    Output.error("shell-helper: cannot watch process \(shellPID): \(error)")
                    return 1
                }
            }
        }

        let client = NetActivityClient(bus: bus)
        var current: Activity?
        var reader = LineReader(maximumBytes: Self.maximumLineBytes)
        var buffer = [UInt8](repeating: 0, count: 4096)

        while true {
            // Sleeps here until the shell writes or dies: no timer, no wake-up in between.
            guard let ready = try? FileDescriptor.waitForInput(watched) else { break }
            if ready.count > 1, ready[1] { break }
            guard ready[0] else { continue }
            let count: Int
            do {
                count = try input.read(into: &buffer)
            } catch .wouldBlock {
                continue
            } catch {
                break
            }
            guard count > 0 else { break }
            for line in reader.lines(in: buffer[..<count]) {
                switch ShellHelperLine(line) {
                case .begin(let kind, let label):
                    current?.end()
                    current = client.begin(label, hints: ActivityHints(kind: kind))
                case .end:
                    current?.end()
                    current = nil
                case nil:
                    continue
                }
            }
        }
        // Exiting closes the bus connection, and the service ends whatever it still held.
        return 0
    }

    /// Closes every descriptor above standard error. The helper outlives the command that
    /// started it and must not keep the shell's pipes open: bash holds pipeline members until
    /// every copy of its process-group pipe is closed, and a reader waits for every writer.
    private static func closeInheritedDescriptors() {
        // The listing's own descriptor is closed by the time it is returned.
        for descriptor in ProcFS().descriptors(of: nil) where descriptor > 2 {
            FileDescriptor(rawValue: descriptor).close()
        }
    }

    /// Standard input reopened read-only, so the shell's end is an end of input; or the FIFO.
    private func openInput() -> FileDescriptor? {
        if let fifo {
            // Read-write, so that no writer's close is an end; as standard input, so that fish
            // writes through /proc/PID/fd/0, which is gone (not a FIFO without a reader, whose
            // opening would block) as soon as the helper is.
            let descriptor: FileDescriptor
            do {
                descriptor = try FileDescriptor.open(fifo, flags: O_RDWR)
            } catch {
                Output.error("shell-helper: cannot open \(fifo): \(error)")
                return nil
            }
            defer { descriptor.close() }
            do {
                try descriptor.duplicate(as: .standardInput)
            } catch {
                Output.error("shell-helper: cannot read \(fifo): \(error)")
                return nil
            }
            return .standardInput
        }
        // The shell hands over its own read-write descriptor, which would keep the FIFO open
        // for writing for as long as the helper lives. Standard input stays that FIFO: the
        // shell checks through /proc that its helper still reads it.
        guard let reopened = try? FileDescriptor.open(readOnly: ProcFS().path("fd/0", of: nil)) else { return .standardInput }
        defer { reopened.close() }
        try? reopened.duplicate(as: .standardInput)
        return .standardInput
    }
}

/// One line of the helper's input.
enum ShellHelperLine: Equatable {
    case begin(ActivityHints.Kind?, label: String)
    case end

    init?(_ bytes: [UInt8]) {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        if text == "end" {
            self = .end
            return
        }
        guard text.hasPrefix("begin ") else { return nil }
        let rest = text.dropFirst("begin ".count)
        let kindWord = rest.prefix { $0 != " " }
        let label = rest.dropFirst(kindWord.count).drop { $0 == " " }
        self = .begin(ActivityHints.Kind(rawValue: String(kindWord)), label: Self.printable(label))
    }

    /// The command line as a label: printable (`PrintableText`, a tab or another control as a
    /// space), cut to the service's limit.
    static func printable(_ text: Substring) -> String {
        PrintableText.label(text)
    }
}

/// Splits a byte stream into lines, keeping at most `maximumBytes` of each: memory stays
/// bounded however long a line the shell sends.
struct LineReader {
    var maximumBytes: Int
    private var pending: [UInt8] = []

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    mutating func lines(in bytes: ArraySlice<UInt8>) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lines.append(pending)
                pending.removeAll(keepingCapacity: true)
            } else if pending.count < maximumBytes {
                pending.append(byte)
            }
        }
        return lines
    }
}
