import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of introspection XML (`<node>`, `<interface>`, `<method>`, `<arg>`, ...): its name,
/// attributes and child elements, text and comments left out.
///
/// The one reader of introspection XML in the suites; each suite looks at the tree in the terms
/// its assertions need.
public struct IntrospectionElement: Sendable {
    public var name: String
    public var attributes: [String: String]
    public var children: [IntrospectionElement]

    /// The root element of `xml`, or nil if `xml` is not well-formed.
    public init?(parsing xml: String) {
        guard let document = try? XMLDocument(xmlString: xml, options: []), let root = document.rootElement() else {
            return nil
        }
        self.init(root)
    }

    private init(_ element: XMLElement) {
        name = element.name ?? ""
        var attributes: [String: String] = [:]
        for attribute in element.attributes ?? [] {
            if let name = attribute.name { attributes[name] = attribute.stringValue ?? "" }
        }
        self.attributes = attributes
        children = (element.children ?? []).compactMap { $0 as? XMLElement }.map(IntrospectionElement.init)
    }

    /// The value of attribute `name`, nil when absent.
    public subscript(attribute: String) -> String? { attributes[attribute] }

    /// The child elements called `name`, in document order.
    public func elements(_ name: String) -> [IntrospectionElement] { children.filter { $0.name == name } }
}
