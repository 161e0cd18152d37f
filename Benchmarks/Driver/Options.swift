#if canImport(Glibc)
import Glibc
#endif

/// `netactivity-bench`'s command line.
struct Options {
    var service = ".build/release/netactivityd"
    /// Another build, measured for memory beside `service` (make bench: the dynamic one).
    var compareService: String?
    /// A build of interface version 2, the reference of the update rows.
    var versionTwoService: String?
    var floor = ".build/bench/c-floor"
    /// The `netactivity` command line whose `watch` the scale table measures as a watcher.
    var cli = ".build/release/netactivity"
    var floorSource = "Benchmarks/floor/c-floor.c"
    var rounds = 11
    var windowMilliseconds = 400
    var warmupMilliseconds = 100
    var latencySamples = 200
    var idleSeconds = 5
    /// Pairs of UpdateActivity windows per row and pattern of the scale table.
    var scaleRounds = 7
    /// Case names to run (all when empty): steady-seq, steady-seq-1cpu, steady-pipe, toggle-seq,
    /// toggle-seq-1cpu, toggle-pipe, begin-end-seq, begin-end-seq-1cpu, begin-end-pipe,
    /// update-seq, update-pipe, latency, footprint, scale, bridge, traffic.
    var only: Set<String> = []
    /// A command (split at spaces) every contender runs under, e.g. valgrind for profiling.
    var wrapper: [String] = []
    /// Print every window's figures on stderr as it completes.
    var verbose = false

    static let usage = """
        Usage: netactivity-bench [OPTIONS]

        Benchmarks netactivityd against libdbus floors on a private dbus-daemon (see
        docs/benchmarks.md). Run from the package root; `make bench` builds everything first.

          --service PATH          netactivityd to measure (default .build/release/netactivityd;
                                  make bench passes the -static-stdlib build that make run and
                                  make install use)
          --compare-service PATH  another build, measured for memory only (make bench: the
                                  default one, which links the Swift runtime dynamically)
          --version2-service PATH a netactivityd of interface version 2: the update rows
                                  (update-seq, update-pipe) measure UpdateActivity against it
          --cli PATH              netactivity, whose watch the scale table measures as a
                                  watcher (default .build/release/netactivity)
          --floor PATH            c-floor binary (default .build/bench/c-floor; built
                                  from Benchmarks/floor/c-floor.c with cc when missing)
          --rounds N              rounds per comparison, median reported (default 11;
                                  rows on two CPUs measure two pairs a round)
          --window-ms N           measured window per contender and round (default 400)
          --warmup-ms N           warm-up before each window (default 100)
          --latency-samples N     signal latency samples per contender and round (default 200)
          --idle-seconds N        idle observation (default 5)
          --scale-rounds N        pairs of 300 ms UpdateActivity windows per row and pattern of
                                  the scale table (default 7)
          --only A,B              run only these: steady-seq steady-seq-1cpu steady-pipe
                                  toggle-seq toggle-seq-1cpu toggle-pipe begin-end-seq
                                  begin-end-seq-1cpu begin-end-pipe update-seq update-pipe
                                  latency footprint scale bridge traffic
          --wrap COMMAND          run every contender under COMMAND, for profiling, e.g.
                                  --wrap "valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p"
          --verbose               print each window's calls, time and CPU on stderr
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) -> String {
            guard let next = rest.popFirst() else { fail("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String, minimum: Int = 1) -> Int {
            let text = value(flag)
            guard let number = Int(text), number >= minimum else { fail("\(flag) takes a number ≥ \(minimum), not '\(text)'") }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--service": options.service = value(argument)
            case "--compare-service": options.compareService = value(argument)
            case "--version2-service": options.versionTwoService = value(argument)
            case "--floor": options.floor = value(argument)
            case "--cli": options.cli = value(argument)
            case "--rounds": options.rounds = number(argument)
            case "--window-ms": options.windowMilliseconds = number(argument)
            case "--warmup-ms": options.warmupMilliseconds = number(argument, minimum: 0)
            case "--latency-samples": options.latencySamples = number(argument)
            case "--idle-seconds": options.idleSeconds = number(argument)
            case "--scale-rounds": options.scaleRounds = number(argument)
            case "--only": options.only = Set(value(argument).split(separator: ",").map(String.init))
            case "--verbose": options.verbose = true
            case "--wrap": options.wrapper = value(argument).split(separator: " ").map(String.init)
            case "-h", "--help":
                say(usage)
                exit(0)
            default: fail("unknown option '\(argument)'")
            }
        }
        return options
    }

    func wants(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
}

func fail(_ message: String) -> Never {
    complain("netactivity-bench: \(message)")
    exit(2)
}
