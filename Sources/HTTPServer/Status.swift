/// An HTTP status code.
///
/// The reason phrase on the wire is libmicrohttpd's standard one for the
/// code; `reasonPhrase` here is for logs and error bodies.
public struct Status: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ code: Int) { self.rawValue = code }
    public init(integerLiteral value: Int) { self.rawValue = value }

    /// The numeric code, such as 404.
    public var code: Int { rawValue }
    public var description: String { "\(rawValue) \(reasonPhrase)" }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(rawValue) }

    public static let ok = Status(200)
    public static let created = Status(201)
    public static let accepted = Status(202)
    public static let noContent = Status(204)
    public static let notModified = Status(304)
    public static let badRequest = Status(400)
    public static let unauthorized = Status(401)
    public static let forbidden = Status(403)
    public static let notFound = Status(404)
    public static let methodNotAllowed = Status(405)
    public static let notAcceptable = Status(406)
    public static let requestTimeout = Status(408)
    public static let conflict = Status(409)
    public static let contentTooLarge = Status(413)
    public static let uriTooLong = Status(414)
    public static let unsupportedMediaType = Status(415)
    public static let unprocessableContent = Status(422)
    public static let tooManyRequests = Status(429)
    public static let requestHeaderFieldsTooLarge = Status(431)
    public static let internalServerError = Status(500)
    public static let notImplemented = Status(501)
    public static let badGateway = Status(502)
    public static let serviceUnavailable = Status(503)
    public static let gatewayTimeout = Status(504)
    public static let insufficientStorage = Status(507)

    /// The standard reason phrase, or "Unknown".
    public var reasonPhrase: String {
        switch rawValue {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 507: "Insufficient Storage"
        default: "Unknown"
        }
    }
}
