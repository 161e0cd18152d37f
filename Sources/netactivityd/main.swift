import NetActivityService
#if canImport(Glibc)
import Glibc
#endif

// netactivityd: parse the command line, then hand over to the service.

func printLine(_ text: String, to descriptor: Int32) {
    var line = text.hasSuffix("\n") ? text : text + "\n"
    line.withUTF8 { _ = write(descriptor, $0.baseAddress, $0.count) }
}

let action: ServiceOptions.Action
do {
    action = try ServiceOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printLine("netactivityd: \(error.description) (see --help)", to: 2)
    exit(2)
}

switch action {
case .help:
    printLine(ServiceOptions.help, to: 1)
case .version:
    printLine("netactivityd \(NetActivityBus.version)", to: 1)
case .run(let options):
    do {
        let service = try Service(options: options)
        exit(service.run())
    } catch {
        printLine("netactivityd: \(error.message)", to: 2)
        exit(1)
    }
}
