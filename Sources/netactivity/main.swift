import NetActivityCLI
#if canImport(Glibc)
import Glibc
#endif

// netactivity: everything lives in NetActivityCLI; a closed pipe is an error to handle, not a signal.
signal(SIGPIPE, SIG_IGN)
exit(await CLI.main(Array(CommandLine.arguments.dropFirst())))
