import Platform

/// The terminal `netactivity top` draws on: its size, its input one key at a time without
/// echo, the alternate screen, and the way back to how the terminal was.
///
/// Only ECHO and ICANON are turned off: the terminal still turns Ctrl-C into SIGINT and Ctrl-Z
/// into SIGTSTP, which `top` handles by leaving the screen first. Not thread-safe: used on the
/// event loop's thread.
final class TerminalScreen {
    let input: Int32
    let output: Int32
    /// The input's settings before `enter()`, while they are changed; nil otherwise.
    private var saved: Terminal.Settings?
    /// The settings `enter()` made, to make again after the process was stopped and continued.
    private var raw: Terminal.Settings?
    private var entered = false

    /// The terminal on `output`, with keys from `input`; nil when `output` is not a terminal.
    init?(input: Int32 = 0, output: Int32 = 1) {
        guard Terminal.isTerminal(output) else { return nil }
        self.input = input
        self.output = output
    }

    deinit {
        leave()
    }

    /// The size of the terminal on `descriptor`, or nil when it is none (or reports 0 × 0).
    static func size(of descriptor: Int32) -> TopFrame.Size? {
        Terminal.size(of: descriptor).map { TopFrame.Size(columns: $0.columns, rows: $0.rows) }
    }

    /// Its size now; 80 × 24 if it cannot say.
    var size: TopFrame.Size {
        Self.size(of: output) ?? TopFrame.Size(columns: 80, rows: 24)
    }

    // MARK: - Entering and leaving

    /// Keys without echo or line editing (when the input is a terminal), the alternate screen,
    /// no cursor.
    func enter() {
        guard !entered else { return }
        entered = true
        if let settings = Terminal.settings(of: input) {
            saved = settings
            raw = settings.keysWithoutEcho
            Terminal.apply(settings.keysWithoutEcho, to: input, discardingInput: true)
        }
        Output.write(Self.enterAlternateScreen + Self.hideCursor, to: output)
    }

    /// After the process was stopped and continued (SIGCONT): the shell that stopped it gave the
    /// terminal its own settings and screen back, so `enter()`'s are made again.
    func reenter() {
        guard entered else { return }
        if let raw { Terminal.apply(raw, to: input, discardingInput: false) }
        Output.write(Self.enterAlternateScreen + Self.hideCursor, to: output)
    }

    /// Back to the terminal as it was: the cursor, the main screen with what it showed, the
    /// input's settings. Harmless when not entered, or when called twice.
    func leave() {
        guard entered else { return }
        entered = false
        Output.write(Self.showCursor + Self.leaveAlternateScreen, to: output)
        if let saved { Terminal.apply(saved, to: input, discardingInput: true) }
        saved = nil
        raw = nil
    }

    // MARK: - Drawing

    /// Draws `frame` over the whole screen in one write: each line at its row, the rest of it
    /// and the rows below cleared. Lines are placed by cursor address rather than line ends, so
    /// a line as wide as the screen never wraps or scrolls it.
    func draw(_ frame: TopFrame, columns: Int) {
        var text = ""
        for (index, line) in frame.lines.enumerated() {
            text += "\u{1B}[\(index + 1);1H"
            text += index == frame.headingLine ? Self.reverse + line + Self.plain : line
            // Erasing to the end of a full line would erase its last cell (the cursor waits there).
            if TerminalText.width(line) < columns { text += Self.eraseToEndOfLine }
        }
        text += "\u{1B}[\(frame.lines.count + 1);1H" + Self.eraseBelow
        Output.write(text, to: output)
    }

    private static let enterAlternateScreen = "\u{1B}[?1049h"
    private static let leaveAlternateScreen = "\u{1B}[?1049l"
    private static let hideCursor = "\u{1B}[?25l"
    private static let showCursor = "\u{1B}[?25h"
    private static let reverse = "\u{1B}[7m"
    private static let plain = "\u{1B}[m"
    private static let eraseToEndOfLine = "\u{1B}[K"
    private static let eraseBelow = "\u{1B}[J"
}
