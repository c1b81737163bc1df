import CMosquitto
import Glibc

/// A failure of the MQTT client: a libmosquitto error or a bad argument.
/// An open struct rather than a closed enum, so that new codes do not break
/// callers that switch on it.
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A topic, filter, URL or option that cannot be used.
        public static let invalidArgument = Code(rawValue: 1)
        /// The client has been stopped.
        public static let stopped = Code(rawValue: 2)
        /// The broker refused a subscription (SUBACK failure code).
        public static let subscriptionRefused = Code(rawValue: 3)
        /// libmosquitto returned an error; `libraryError` holds its number.
        public static let library = Code(rawValue: 4)
        /// A file given for TLS cannot be used.
        public static let tlsFiles = Code(rawValue: 5)
        /// libmosquitto cannot be loaded (it is opened when the first
        /// client is made, not when the process starts).
        public static let libraryUnavailable = Code(rawValue: 6)
    }

    public let code: Code
    /// libmosquitto's error number (`MOSQ_ERR_*`) when there was one.
    public let libraryError: Int32?
    public let message: String

    public init(_ code: Code, _ message: String, libraryError: Int32? = nil) {
        self.code = code
        self.message = message
        self.libraryError = libraryError
    }

    /// An error from a libmosquitto call's return value (`mosquitto_strerror`).
    static func library(_ result: Int32, _ what: String) -> MQTTError {
        MQTTError(.library, "\(what): \(libraryErrorText(result))", libraryError: result)
    }

    public var description: String { message }
}

/// libmosquitto's text for an error number.
func libraryErrorText(_ result: Int32) -> String {
    if result == CMOSQ_ERR_ERRNO, let text = strerror(errno) { return String(cString: text) }
    return cmosq_strerror(result).map { String(cString: $0) } ?? "error \(result)"
}
