// netactivity-bench: netactivityd against the libdbus floors, on a private dbus-daemon.
// Parses the command line and hands over to `Benchmark`; `make bench` is the documented way in.
#if canImport(Glibc)
import Glibc
#endif

signal(SIGPIPE, SIG_IGN)
let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
do {
    try Benchmark(options).run()
} catch {
    complain("netactivity-bench: \(error)")
    exit(1)
}
