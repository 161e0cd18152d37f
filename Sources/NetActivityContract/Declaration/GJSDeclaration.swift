import DBus

/// The names the GNOME Shell extension reads, as a script of constants made from the
/// descriptors: how `gnome-extension/src/interface.js` is made (`make interface`). GJS cannot
/// import Swift, so the extension gets the declaration as generated code, checked by a test
/// like the XML, rather than its own copy of the names.
public enum GJSDeclaration {
    /// A script declaring the bus name and path, and for each of `interfaces` (named in it by
    /// `constant`) the interface's name and every property's name and type under the
    /// property's name with a lowercase first letter: `MAIN_PROPERTIES.claimedApplication`.
    public static func script(
        busName: String, path: String, interfaces: [(constant: String, descriptor: InterfaceDescriptor)]
    ) -> String {
        var script = """
            // MARK: - The interface, as the Swift code declares it

            // Generated from Sources/NetActivityContract/Declaration/ by `make interface`; do not edit.
            // RepositoryTests fails while this file is not what the declaration generates.

            const BUS_NAME = \(quoted(busName));
            const OBJECT_PATH = \(quoted(path));

            """
        for (constant, descriptor) in interfaces {
            script += "const \(constant)_INTERFACE = \(quoted(descriptor.name.rawValue));\n"
        }
        for (constant, descriptor) in interfaces {
            script += "\n/** Each property of \(descriptor.name): its name and D-Bus type. */\n"
            script += "const \(constant)_PROPERTIES = Object.freeze({\n"
            for property in descriptor.properties {
                script += "    \(key(property.name.rawValue)): Object.freeze({name: \(quoted(property.name.rawValue)), "
                    + "type: \(quoted(property.signature.rawValue))}),\n"
            }
            script += "});\n"
        }
        return script
    }

    /// The property's name with its first letter lowercase, as JavaScript names members: the
    /// key under which the script declares it.
    public static func key(_ name: String) -> String {
        name.prefix(1).lowercased() + name.dropFirst()
    }

    /// `text` as a single-quoted JavaScript string: the declaration's names and signatures
    /// hold no quote or backslash, but a quoted one stays a string.
    static func quoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}

extension NetActivityInterface {
    /// `gnome-extension/src/interface.js`: the bus name, the path, and the main and activity
    /// interfaces with their properties.
    public static var gjsDeclaration: String {
        GJSDeclaration.script(
            busName: NetActivityBus.name.rawValue, path: NetActivityBus.path.rawValue,
            interfaces: [("MAIN", descriptor), ("ACTIVITY", ActivityObjectInterface.descriptor)])
    }
}
