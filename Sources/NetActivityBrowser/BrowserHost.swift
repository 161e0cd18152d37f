import DesktopApplications
import NetActivity
import NetActivityContract
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The native messaging host `io.github.netactivity.browser`: reads the extension's messages
/// from the browser, one download each, until the browser closes its end, and keeps
/// `BrowserDownloads` in line with them.
///
/// It never writes to standard output, the browser's channel: problems go to `problems`.
public struct BrowserHost {
    private let downloads: BrowserDownloads
    private let problems: Problems
    private var framer = NativeMessageFramer()

    public init(downloads: BrowserDownloads, problems: Problems) {
        self.downloads = downloads
        self.problems = problems
    }

    /// Reads `input` until its end (the browser quit, crashed or let go of the host), applying
    /// each message; then ends every download. Sleeps in `read` between messages.
    public mutating func run(reading input: Int32 = 0) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let descriptor = FileDescriptor(rawValue: input)
        while true {
            let count: Int
            do {
                count = try descriptor.read(into: &buffer)
            } catch .wouldBlock {
                continue
            } catch {
                break
            }
            guard count > 0 else { break }
            receive(buffer[..<count])
        }
        if framer.isInsideMessage {
            problems.say(.truncated, "the browser's input ended inside a message")
        }
        downloads.endAll()
    }

    /// Applies the messages `bytes` completes.
    public mutating func receive(_ bytes: ArraySlice<UInt8>) {
        for frame in framer.append(bytes) {
            switch frame {
            case .oversize(let length):
                problems.say(
                    .oversize,
                    "a message of \(length) bytes, more than \(NativeMessageFramer.maximumMessageBytes); skipped")
            case .message(let message):
                switch DownloadMessage.decode(message) {
                case .success(let download):
                    if let field = download.unknownFields.first {
                        problems.say(.unknownFields, "a message with an unknown field '\(field)'; the field is ignored")
                    }
                    downloads.apply(download)
                case .failure(.notUTF8):
                    problems.say(.notUTF8, "a message that is not UTF-8; ignored")
                case .failure(.malformed(let why)):
                    problems.say(.malformed, "a message that is no download (\(why)); ignored")
                }
            }
        }
    }

    /// Every download's hints: the browser as an application (the desktop id of the process that
    /// started the host, its parent: Debian's `chromium`, `firefox-esr`), its entry's icon, and
    /// kind `download`.
    public static func hints(forParentOf pid: UInt32 = UInt32(getpid()), processes: Processes = Processes()) -> ActivityHints {
        var hints = ActivityHints(kind: .download)
        guard let parent = processes.parent(ofProcess: pid), let id = processes.application(ofProcess: parent) else {
            return hints
        }
        hints.application = id
        // A cut path would name no icon.
        if let icon = processes.entries.icon(of: id), icon.utf8.count <= NetActivityBus.Hint.maximumBytes {
            hints.icon = icon
        }
        return hints
    }
}
