import Foundation

/// What went wrong with a request to the gateway: its RFC 9457 problem
/// (type, title, status, detail, and the D-Bus and ATT error where there
/// was one), or why the gateway could not be reached.
public struct GatewayError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status; nil when no answer came.
    public var status: Int?
    /// The problem's type, `urn:blegateway:problem:not-connected`.
    public var type: String?
    public var title: String?
    public var detail: String
    public var instance: String?
    /// The BlueZ or D-Bus error name.
    public var dbusError: String?
    /// The ATT error code the peripheral answered with.
    public var attError: Int?

    public init(detail: String) { self.detail = detail }

    init(unreachable url: URL, _ error: any Error) {
        detail = "cannot reach the gateway at \(url.absoluteString): \(error.localizedDescription)"
    }

    init(status: Int, body: Data, path: String) {
        struct Problem: Decodable {
            var type: String?
            var title: String?
            var detail: String?
            var instance: String?
            var dbusError: String?
            var attError: Int?
        }
        self.status = status
        let problem = try? JSONDecoder.gateway.decode(Problem.self, from: body)
        type = problem?.type
        title = problem?.title
        instance = problem?.instance ?? path
        dbusError = problem?.dbusError
        attError = problem?.attError
        detail = problem?.detail ?? problem?.title ?? "HTTP \(status) from \(path)"
    }

    /// The problem's short name: `not-connected` for `urn:blegateway:problem:not-connected`.
    public var problem: String? { type.map { String($0.split(separator: ":").last ?? Substring($0)) } }

    public var description: String { status.map { "\(detail) (HTTP \($0))" } ?? detail }
}
