import DBus
import NetActivity
import NetActivityContract
import NetActivityModel
import Testing

/// The descriptors' typed halves: signatures derived from Swift types, values decoded strictly,
/// calls built and decoded as declared, and the XML comments they generate.
@Suite struct DescriptorTests {
    @Test func signaturesComeFromTheSwiftTypes() {
        #expect(Bool.signature == "b" && UInt32.signature == "u" && UInt64.signature == "t")
        #expect(Double.signature == "d" && String.signature == "s" && VariantDictionary.signature == "a{sv}")
        #expect(Int32.signature == "i" && UInt8.signature == "y" && [UInt8].signature == "ay")
        #expect(Int32(.int32(-3)) == -3 && Int32(.uint32(3)) == nil && UInt8(.byte(7)) == 7 && UInt8(.int32(7)) == nil)
        #expect([ActivityEntry].signature == "a(ussttt)")
        #expect(NetActivityInterface.activities.signature == "a(ussttt)")
        #expect(NetActivityInterface.updateActivity.declaration.inputSignature == "utt")
        #expect(NetActivityInterface.beginActivityWithHints.declaration.inputSignature == "sa{sv}")
        #expect(NetActivityInterface.beginActivity.declaration.outputSignature == "u")
    }

    /// What follows from an activity property's line in `ActivityObjectInterface.properties`:
    /// the value the service reads, the field a client fills, and the progress signal.
    @Test func anActivityPropertyIsDerivedFromItsKeyPath() {
        let properties = ActivityObjectInterface.properties
        #expect(properties.map(\.declaration) == ActivityObjectInterface.descriptor.properties)
        #expect(properties.filter { !$0.isHeld }.map(\.declaration.name.rawValue) == ["ProcessID", "UserID", "Application"])
        #expect(ActivityObjectInterface.progressNames.map(\.rawValue) == ["Completed", "Total", "Fraction", "Rate"])

        let activity = NetActivityModel.Activity(
            id: 7, owner: ":1.2", label: "x", completed: 5, total: 10, started: 3,
            hints: NetActivityModel.ActivityHints(application: "org.gnome.Software", icon: "i", kind: .update), rate: 2)
        let values = Dictionary(
            uniqueKeysWithValues: properties.compactMap { property in
                property.value(of: activity).map { (property.declaration.name.rawValue, $0) }
            })
        #expect(values["Kind"] == .string("update") && values["ClaimedApplication"] == .string("org.gnome.Software"))
        #expect(values["Fraction"] == .double(0.5) && values["Rate"] == .double(2) && values["Id"] == .uint32(7))

        // A client's ActivityInfo, filled from those values alone, holds the same activity.
        var info = ActivityInfo(id: 0, owner: "", label: "", completed: 0, total: 0, started: 0)
        for property in properties {
            guard let field = property.field(through: \ActivityInfo.activity), let value = values[property.declaration.name.rawValue]
            else { continue }
            #expect(field.apply(.variant(value), to: &info))
        }
        #expect(info.activity == activity)
        #expect(info.kind == "update" && info.fraction == 0.5)
    }

    @Test func valuesOfAnotherTypeDecodeToNil() {
        #expect(NetActivityInterface.count.decode(.variant(.uint32(3))) == 3)
        #expect(NetActivityInterface.count.decode(.uint32(3)) == 3)
        #expect(NetActivityInterface.count.decode(.int32(3)) == nil)
        #expect(NetActivityInterface.count.decode(.variant(.string("3"))) == nil)
        #expect(ActivityObjectInterface.label.decode(.objectPath("/a")) == nil, "an object path is not a string")
        #expect(VariantDictionary(.dictionary(key: "s", value: "s", [])) == nil)
        let entry = ActivityEntry(NetActivityModel.Activity(id: 7, owner: ":1.2", label: "x", completed: 1, total: 2, started: 3))
        #expect(ActivityEntry(entry.value) == entry)
        #expect(ActivityEntry(.structure([.uint32(7), .string(":1.2"), .string("x")])) == nil)
        #expect([ActivityEntry](.array(element: "(ussttt)", [entry.value, .uint32(1)])) == nil, "all or nothing")
        #expect(NoReply(values: [.string("x")]) == nil)
        #expect(IgnoredReply(values: [.string("x")]) != nil, "a foreign peer's surplus reply is no failure")
    }

    @Test func callsAreBuiltAndDecodedAsDeclared() throws {
        let update = NetActivityInterface.updateActivity
        let arguments = update.arguments(7, 10, 20)
        #expect(arguments == [.uint32(7), .uint64(10), .uint64(20)])
        let (id, completed, total) = try update.decode(arguments)
        #expect(id == 7 && completed == 10 && total == 20)
        #expect(throws: ArgumentMismatch.self) { try update.decode([.uint32(7), .uint64(10)]) }
        #expect(throws: ArgumentMismatch.self) { try update.decode([.uint32(7), .uint64(10), .uint32(20)]) }
        let hinted = NetActivityInterface.beginActivityWithHints
        let hints = VariantDictionary([("kind", .string("download"))])
        let (label, dictionary) = try hinted.decode(hinted.arguments("Updates", hints))
        #expect(label == "Updates" && dictionary == hints)
        #expect(throws: ArgumentMismatch.self) { try hinted.decode([.string("Updates"), .string("download")]) }
        #expect(throws: ArgumentMismatch.self) { try NetActivityInterface.endActivity.decode([.string("4")]) }
        #expect(NetActivityInterface.push.arguments().isEmpty)
        #expect(NetActivityInterface.beginActivity.reply([.uint32(9)]) == 9)
        #expect(NetActivityInterface.beginActivity.reply([]) == nil)
        #expect(NetActivityInterface.push.reply([.uint32(9)]) == nil)

        let message = try NetActivityInterface.endActivity.call(4, destination: NetActivityBus.name, path: NetActivityBus.path)
        #expect(message.member == NetActivityBus.Member.endActivity)
        #expect(message.interface == NetActivityBus.interface)
        #expect(try message.arguments() == [.uint32(4)])
    }

    @Test func theNamesTheContractExportsAreTheDescriptors() {
        #expect(NetActivityBus.Member.updateActivityFraction == NetActivityInterface.updateActivityFraction.name)
        #expect(NetActivityInterface.descriptor.properties.map(\.name) == [
            NetActivityInterface.active.name, NetActivityInterface.visible.name, NetActivityInterface.count.name,
            NetActivityInterface.progress.name, NetActivityInterface.rate.name, NetActivityInterface.activities.name,
            NetActivityInterface.version.name, NetActivityInterface.interfaceVersion.name,
        ])
    }

    @Test func theXMLCommentsWrapAndStayWellFormed() {
        #expect(IntrospectionDocument.comment("Short: fits.", indent: 4) == "    <!-- Short: fits. -->\n")
        let long = IntrospectionDocument.comment(String(repeating: "word ", count: 40) + "-- end", indent: 4)
        let lines = long.split(separator: "\n")
        #expect(lines.first == "    <!--" && lines.last == "    -->")
        #expect(lines.allSatisfy { $0.count <= 96 }, "\(long)")
        #expect(!lines.dropFirst().dropLast().contains { $0.contains("--") }, "\(long)")
        let changed = SignalDescriptor<String, UInt32>(
            "Changed", of: NetActivityBus.interface, "name", "count", doc: "Something changed.")
        let tick = SignalDescriptor("Tick", of: NetActivityBus.interface, doc: "Time passed.")
        let withSignals = IntrospectionDocument.xml(
            overview: "", interfaces: [
                InterfaceDescriptor(
                    NetActivityBus.interface, doc: "", properties: [], signals: [changed.declaration, tick.declaration])
            ])
        #expect(withSignals.contains(
            "    <!-- Changed: Something changed. -->\n    <signal name=\"Changed\">\n"
                + "      <arg name=\"name\" type=\"s\"/>\n      <arg name=\"count\" type=\"u\"/>\n    </signal>\n"
                + "    <!-- Tick: Time passed. -->\n    <signal name=\"Tick\"/>\n"), "\(withSignals)")
        let xml = NetActivityInterface.introspectionXML
        #expect(xml.contains("<method name=\"UpdateActivity\">\n      <arg name=\"id\" type=\"u\" direction=\"in\"/>"))
        #expect(xml.contains("<property name=\"Activities\" type=\"a(ussttt)\" access=\"read\">\n"
            + "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"invalidates\"/>"))
    }
}
