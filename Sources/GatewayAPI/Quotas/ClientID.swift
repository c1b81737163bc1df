import HTTPServer

/// Who a quota counts against: the API key's holder when the gateway has
/// one (every caller with the key is that one client), else the peer's
/// address (without its port: one host's connections are one client), or
/// `local` for callers in the process (the MQTT bridge).
struct ClientID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    let rawValue: String

    init(rawValue: String) { self.rawValue = rawValue }

    /// The client of a request to a gateway with `apiKey` (checked before
    /// any route runs).
    init(_ request: Request, apiKey: String?) {
        if let apiKey, !apiKey.isEmpty {
            rawValue = "api-key"
        } else {
            rawValue = request.remoteAddress.map { "address:\($0.host)" } ?? "local"
        }
    }

    /// A caller in this process (the MQTT bridge), which holds the API key
    /// when the gateway has one: counted as a request without a peer is.
    static func inProcess(apiKey: String?) -> ClientID {
        ClientID(rawValue: apiKey.map { $0.isEmpty ? "local" : "api-key" } ?? "local")
    }

    /// The owner the store recorded; resources stored before owners were
    /// recorded count against an owner of their own.
    init(stored: String?) { rawValue = stored ?? "unrecorded" }

    var description: String { rawValue }
}
