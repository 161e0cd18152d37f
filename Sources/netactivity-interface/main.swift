#if canImport(Glibc)
import Glibc
#endif
import NetActivityContract

// Prints what the contract's descriptors declare, for `make interface`: the introspection XML
// (dbus/io.github.netactivity.NetActivity1.xml), or with --gjs the GNOME Shell extension's
// constants (gnome-extension/src/interface.js).
switch CommandLine.arguments.dropFirst().first {
case nil: print(NetActivityInterface.introspectionXML, terminator: "")
case "--gjs": print(NetActivityInterface.gjsDeclaration, terminator: "")
case let other?:
    var message = "netactivity-interface: unknown option '\(other)'; usage: netactivity-interface [--gjs]\n"
    message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}
