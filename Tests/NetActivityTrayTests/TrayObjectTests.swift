import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

/// The exported object as foreign clients see it.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayObjectTests {
    @Test func gdbusIntrospectListsTheItemInterface() throws {
        try requireTool("gdbus")
        let bus = try TrayOnBus()
        try bus.startTray()
        let result = try run(
            "gdbus",
            ["introspect", "--address", bus.address, "--dest", (try bus.itemName).rawValue,
             "--object-path", StatusNotifierNames.itemPath.rawValue],
            timeout: .seconds(20))
        try #require(result.succeeded, "\(result)")
        let text = result.stdout
        #expect(text.contains("interface org.kde.StatusNotifierItem {"), "\(text)")
        for method in ["Activate(in  i x,", "SecondaryActivate(in  i x,", "ContextMenu(in  i x,", "Scroll(in  i delta,"] {
            #expect(text.contains(method), "no \(method) in:\n\(text)")
        }
        for signal in ["NewTitle();", "NewIcon();", "NewAttentionIcon();", "NewOverlayIcon();", "NewToolTip();", "NewStatus(s status);"] {
            #expect(text.contains(signal), "no \(signal) in:\n\(text)")
        }
        for property in [
            "readonly s Category = 'ApplicationStatus';", "readonly s Id = 'netactivity';", "readonly s Title = ",
            "readonly s Status = 'Passive';", "readonly s IconName = 'io.github.netactivity.NetActivity-idle';",
            "readonly s AttentionIconName = 'io.github.netactivity.NetActivity-active';", "readonly b ItemIsMenu = false;",
            "readonly i WindowId = 0;", "readonly o Menu = '/NO_DBUSMENU';", "readonly a(iiay) IconPixmap = [];",
            "readonly a(iiay) AttentionIconPixmap = [];", "readonly s OverlayIconName = '';",
            "readonly a(iiay) OverlayIconPixmap = [];", "readonly (sa(iiay)ss) ToolTip = ",
        ] {
            #expect(text.contains(property), "no \(property) in:\n\(text)")
        }
    }

    @Test(arguments: [
        ["Activate", "ii", "10", "20"], ["SecondaryActivate", "ii", "10", "20"], ["ContextMenu", "ii", "10", "20"],
        ["Scroll", "is", "-120", "vertical"],
    ])
    func clicksAndScrollsAnswerWithoutError(_ call: [String]) throws {
        try requireTool("busctl")
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        let result = try run(
            "busctl",
            // `--` so that busctl does not read -120 as an option.
            ["--address=\(bus.address)", "call", "--", (try bus.itemName).rawValue, StatusNotifierNames.itemPath.rawValue,
             StatusNotifierNames.itemInterface.rawValue] + call,
            timeout: .seconds(20))
        #expect(result.succeeded, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(tray.isRunning)
    }

    /// What the running item introspects is `StatusNotifierInterface.item`, member for member,
    /// in the declared order: the table is bound to the declaration, not written beside it.
    @Test func theExportedItemIntrospectsAsDeclared() throws {
        let bus = try TrayOnBus()
        try bus.startTray()
        let item = try bus.observeItem()
        let reply = try item.connection.call(
            .methodCall(destination: item.item, path: StatusNotifierNames.itemPath, interface: .introspectable, member: "Introspect"),
            timeout: .seconds(10))
        let xml = try #require(try reply.arguments().first?.string)
        let root = try #require(IntrospectionElement(parsing: xml), "not well-formed:\n\(xml)")
        let interface = try #require(
            root.elements("interface").first { $0["name"] == StatusNotifierNames.itemInterface.rawValue }, "\(xml)")
        func arguments(_ element: IntrospectionElement) -> [String] {
            element.elements("arg").map { "\($0["direction"] ?? "-") \($0["type"] ?? "") \($0["name"] ?? "")" }
        }
        let declared = StatusNotifierInterface.item
        #expect(interface.children.map(\.name) == Array(repeating: "method", count: declared.methods.count)
            + Array(repeating: "signal", count: declared.signals.count)
            + Array(repeating: "property", count: declared.properties.count))
        #expect(interface.elements("method").map { [$0["name"] ?? ""] + arguments($0) } == declared.methods.map { method in
            [method.name.rawValue] + method.inputs.map { "in \($0.signature) \($0.name)" }
                + method.outputs.map { "out \($0.signature) \($0.name)" }
        })
        #expect(interface.elements("signal").map { [$0["name"] ?? ""] + arguments($0) } == declared.signals.map { signal in
            [signal.name.rawValue] + signal.arguments.map { "- \($0.signature) \($0.name)" }
        })
        #expect(interface.elements("property").map { property in
            [property["name"], property["type"], property["access"],
             property.elements("annotation").first { $0["name"] == "org.freedesktop.DBus.Property.EmitsChangedSignal" }?["value"]]
        } == declared.properties.map { [$0.name.rawValue, $0.signature.rawValue, "read", $0.changes.rawValue] })
    }

    @Test func getAllGivesEveryPropertyWithItsType() throws {
        let bus = try TrayOnBus()
        try bus.startTray()
        let item = try bus.observeItem()
        let message = try Message.methodCall(
            destination: item.item, path: StatusNotifierNames.itemPath, interface: .properties, member: "GetAll",
            arguments: [.string(StatusNotifierNames.itemInterface.rawValue)])
        let reply = try item.connection.call(message, timeout: .seconds(10)).arguments()
        let properties = try #require(reply.first?.stringKeyedEntries).mapValues { $0.unwrapped ?? $0 }
        let expected: [String: String] = [
            "Category": "s", "Id": "s", "Title": "s", "Status": "s", "WindowId": "i", "IconThemePath": "s",
            "Menu": "o", "ItemIsMenu": "b", "IconName": "s", "IconPixmap": "a(iiay)", "OverlayIconName": "s",
            "OverlayIconPixmap": "a(iiay)", "AttentionIconName": "s", "AttentionIconPixmap": "a(iiay)",
            "AttentionMovieName": "s", "ToolTip": "(sa(iiay)ss)",
        ]
        #expect(properties.mapValues(\.signature.rawValue) == expected)
        #expect(properties["Category"] == .string("ApplicationStatus"))
        #expect(properties["Id"] == .string("netactivity"))
        #expect(properties["ItemIsMenu"] == .boolean(false))
        #expect(properties["Menu"] == .objectPath("/NO_DBUSMENU"))
        // The built tray runs from this tree's .build: hosts find the icons in its data/icons.
        let tree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        #expect(properties["IconThemePath"] == .string(tree.path + "/data/icons"))
    }
}
