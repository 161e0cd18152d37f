import NetActivity
#if canImport(Glibc)
import Glibc
#endif

// An app that holds a client and does nothing, built against the core library alone: the
// client-library RSS and kill -9 tests run it. It begins one activity labelled "idle client"
// (or, with `push`, holds one `push()`), prints "ready" and idles until killed. No Swift
// concurrency of its own, so the client's thread is the only one besides main.
let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3 && arguments[2] == "push" else {
    let usage = "usage: na-idleclient BUS-ADDRESS [push]\n"
    _ = write(2, usage, usage.utf8.count)
    exit(2)
}
let client = NetActivityClient(bus: .address(arguments[1]))
var held: Activity?
if arguments.count == 3 {
    client.push()
} else {
    held = client.begin("idle client")
}
let ready = "ready\n"
_ = write(1, ready, ready.utf8.count)
withExtendedLifetime(held) {
    while true { sleep(3600) }
}
