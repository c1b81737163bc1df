/// Why a server could not start.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; an open set, compared by value.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The host could not be resolved or the port is out of range.
        public static let invalidAddress = Code(rawValue: "invalid-address")
        /// The certificate or key could not be read or used.
        public static let tlsConfiguration = Code(rawValue: "tls-configuration")
        /// libmicrohttpd refused to start (port in use, bad option, ...).
        public static let startFailed = Code(rawValue: "start-failed")
        /// `start()` was called on a server that already started.
        public static let alreadyStarted = Code(rawValue: "already-started")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, with libmicrohttpd's own message when it gave one.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
