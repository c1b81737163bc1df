/// An HTTP request method, compared by its exact (case-sensitive) token.
///
/// Any token is accepted so that extension methods reach the router, which
/// answers 405 for those it has no route for.
public struct Method: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// A method from its token, such as `GET`.
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static let get = Method("GET")
    public static let head = Method("HEAD")
    public static let post = Method("POST")
    public static let put = Method("PUT")
    public static let patch = Method("PATCH")
    public static let delete = Method("DELETE")
    public static let options = Method("OPTIONS")
}
