import NetActivity
#if canImport(Glibc)
import Glibc
#endif

// An app that holds a client and does nothing, built against the core library alone: the
// client-library RSS test measures it. It begins one activity (so the client's thread and bus
// connection exist), or holds one push() with `push`, prints "ready" once the service has it, and idles until stdin closes.
let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3 && arguments[2] == "push" else {
    print("usage: na-idleclient BUS-ADDRESS [push]")
    exit(2)
}
let client = NetActivityClient(bus: .address(arguments[1]))
let activity = client.begin("idle client")
if arguments.count == 3 {
    activity.end()
    client.push()
}
await client.flush()
let ready = "ready\n"
_ = write(1, ready, ready.utf8.count)
var byte: UInt8 = 0
while read(0, &byte, 1) > 0 {}
activity.end()
await client.flush()
