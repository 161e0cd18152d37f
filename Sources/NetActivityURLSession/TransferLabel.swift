import Foundation
import NetActivity

extension NetActivityClient {
    /// "host/path" of `url`, cut to the service's label limit; the URL itself without a host.
    public static func label(for url: URL?) -> String {
        guard let url else { return "request" }
        return fitted((url.host ?? url.absoluteString) + url.path)
    }
}
