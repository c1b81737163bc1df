import Foundation

/// Where the gateway is, the API key it wants and whether to go through its
/// fleet: from the manager's options (`CBManagerOptionGatewayURLKey`,
/// `CBManagerOptionGatewayAPIKeyKey`, `CBManagerOptionGatewayFleetKey`), else
/// the environment (`BLEGATEWAY_URL`, `BLEGATEWAY_API_KEY`,
/// `BLEGATEWAY_FLEET=1`), else `http://127.0.0.1:8080`, not through a fleet.
public struct GatewayLocation: Sendable, Hashable {
    public static let defaultURL = "http://127.0.0.1:8080"

    public var url: URL
    public var apiKey: String?
    /// Every device any gateway of this gateway's fleet hears, through its
    /// `/v1/fleet/` routes (docs/fleet.md), rather than its own.
    public var fleet: Bool

    public init(url: URL, apiKey: String? = nil, fleet: Bool = false) {
        self.url = url
        self.apiKey = apiKey
        self.fleet = fleet
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
        fleet = (options?[CBManagerOptionGatewayFleetKey] as? Bool) ?? ["1", "true", "yes"].contains(environment["BLEGATEWAY_FLEET"] ?? "")
    }
}
