/// The answer of the gateway that carried out a fleet command: its HTTP
/// status, content type and body, as its own route gave them.
public struct FleetAnswer: Sendable, Hashable {
    /// The gateway that answered.
    public var gateway: String
    public var status: Int
    public var contentType: String?
    public var body: [UInt8]

    public init(gateway: String, status: Int, contentType: String?, body: [UInt8]) {
        self.gateway = gateway
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}
