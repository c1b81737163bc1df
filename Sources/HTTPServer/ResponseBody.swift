/// The body of a response.
public enum ResponseBody: Sendable {
    /// A complete body, sent with `Content-Length`.
    case bytes([UInt8])
    /// A body of unknown length, sent chunked as `writer` produces it (for
    /// Server-Sent Events and other long-lived streams).
    case stream(StreamWriter)

    /// No body (`Content-Length: 0`).
    public static var empty: ResponseBody { .bytes([]) }

    /// The body's size when it is known in advance.
    public var count: Int? {
        switch self {
        case .bytes(let bytes): bytes.count
        case .stream: nil
        }
    }
}
