#if canImport(Glibc)
import Glibc
#endif

/// A terminal on a descriptor: whether it is one, its size, and its input settings. The
/// corresponding C functions are `isatty`, `ioctl(TIOCGWINSZ)`, `tcgetattr` and `tcsetattr`.
public enum Terminal {
    /// A terminal's input settings, as `tcgetattr` gave them, to make again later.
    public struct Settings {
        fileprivate var value: termios

        /// These settings with keys one at a time and without echo: no line editing (ICANON),
        /// no echo, a read returns at the first byte. The terminal still turns Ctrl-C into
        /// SIGINT and Ctrl-Z into SIGTSTP.
        public var keysWithoutEcho: Settings {
            var copy = value
            copy.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &copy.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            return Settings(value: copy)
        }
    }

    public static func isTerminal(_ descriptor: Int32) -> Bool {
        system_isatty(descriptor) == 1
    }

    /// Its size in cells, or nil when it is none (or reports 0 × 0).
    public static func size(of descriptor: Int32) -> (columns: Int, rows: Int)? {
        var size = winsize()
        guard system_ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// The input settings of the terminal on `descriptor`; nil when it is no terminal.
    public static func settings(of descriptor: Int32) -> Settings? {
        var value = termios()
        guard isTerminal(descriptor), system_tcgetattr(descriptor, &value) == 0 else { return nil }
        return Settings(value: value)
    }

    /// Makes `settings` the terminal's; with `discardingInput`, once what was written is out
    /// and what was typed is dropped (`TCSAFLUSH`), else at once.
    public static func apply(_ settings: Settings, to descriptor: Int32, discardingInput: Bool) {
        var value = settings.value
        system_tcsetattr(descriptor, discardingInput ? TCSAFLUSH : TCSANOW, &value)
    }
}
