import NetActivityContract

// Prints dbus/io.github.netactivity.NetActivity1.xml as the contract's descriptors declare it
// (`make interface-xml`).
print(NetActivityInterface.introspectionXML, terminator: "")
