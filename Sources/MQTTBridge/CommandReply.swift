import GatewayAPI

/// The answer to an MQTT command, as published on its reply topic: the
/// status the REST route gives for the same operation (in the `status`
/// user property), the content type, and the body (the route's JSON, or
/// problem JSON).
struct CommandReply: Sendable, Hashable {
    let status: Int
    let contentType: String?
    let body: [UInt8]

    /// A JSON answer (`status` 2xx).
    static func json(_ json: JSON, status: Int = 200) -> CommandReply {
        CommandReply(status: status, contentType: "application/json", body: json.bytes)
    }

    /// A success without a body (204).
    static let noContent = CommandReply(status: 204, contentType: nil, body: [])

    /// A problem.
    static func problem(_ problem: BridgeProblem) -> CommandReply {
        CommandReply(status: problem.status, contentType: "application/problem+json", body: problem.json)
    }
}
