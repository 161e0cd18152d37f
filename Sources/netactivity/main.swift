import NetActivityCLI
#if canImport(Glibc)
import Glibc
#endif

// netactivity: everything lives in NetActivityCLI; a closed pipe is an error to handle, not a signal.
// No top-level await: an async main would start libdispatch's pool (and its 1 Hz monitor) for
// every command, the idle tray included.
signal(SIGPIPE, SIG_IGN)
exit(CLI.main(Array(CommandLine.arguments.dropFirst())))
