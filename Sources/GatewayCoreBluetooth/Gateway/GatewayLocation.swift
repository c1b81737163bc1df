import Foundation

/// Where the gateway is and the API key it wants: from the manager's
/// options (`CBManagerOptionGatewayURLKey`, `CBManagerOptionGatewayAPIKeyKey`),
/// else the environment (`BLEGATEWAY_URL`, `BLEGATEWAY_API_KEY`), else
/// `http://127.0.0.1:8080`.
public struct GatewayLocation: Sendable, Hashable {
    public static let defaultURL = "http://127.0.0.1:8080"

    public var url: URL
    public var apiKey: String?

    public init(url: URL, apiKey: String? = nil) {
        self.url = url
        self.apiKey = apiKey
    }

    /// Reads the options, then the environment; a URL that cannot be
    /// parsed is an error that names it.
    public init(options: [String: Any]? = nil, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(GatewayError)
    {
        let text = (options?[CBManagerOptionGatewayURLKey] as? String) ?? environment["BLEGATEWAY_URL"] ?? Self.defaultURL
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil
        else {
            throw GatewayError(detail: "'\(text)' is not a gateway URL (http://HOST:PORT)")
        }
        self.url = url
        let key = (options?[CBManagerOptionGatewayAPIKeyKey] as? String) ?? environment["BLEGATEWAY_API_KEY"]
        apiKey = key?.isEmpty == false ? key : nil
    }
}
