import HTTPServer

/// An RFC 9457 problem: the body of every error response
/// (`application/problem+json`).
///
/// `type` is a URN naming the kind of problem (stable for clients to switch
/// on); `title` is its short human summary; `detail` says what went wrong
/// this time. When BlueZ or D-Bus reported the failure, `dbusError` keeps the
/// error name it gave (`org.bluez.Error.NotPermitted`) and `attError` the ATT
/// error code of a peripheral's refusal.
public struct Problem: Error, Sendable, Hashable {
    public var kind: Kind
    public var status: Status
    public var detail: String
    /// The request path the problem occurred on.
    public var instance: String?
    public var dbusError: String?
    public var attError: UInt8?
    /// For ambiguous names: what the name could mean (each a JSON object).
    public var candidates: [[String: String]]?
    /// For invalid input: which parameter, and why.
    public var invalidParameters: [InvalidParameter]?

    public struct InvalidParameter: Sendable, Hashable {
        public var name: String
        public var reason: String
        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    public init(
        _ kind: Kind, status: Status, detail: String, dbusError: String? = nil, attError: UInt8? = nil,
        candidates: [[String: String]]? = nil, invalidParameters: [InvalidParameter]? = nil
    ) {
        self.kind = kind
        self.status = status
        self.detail = detail
        self.dbusError = dbusError
        self.attError = attError
        self.candidates = candidates
        self.invalidParameters = invalidParameters
    }

    /// The problem type as a URN (`urn:blegateway:problem:not-connected`).
    public var type: String { "urn:blegateway:problem:\(kind.rawValue)" }

    /// One kind of problem: its URN suffix and title.
    public struct Kind: Sendable, Hashable {
        public let rawValue: String
        public let title: String

        public init(_ rawValue: String, title: String) {
            self.rawValue = rawValue
            self.title = title
        }
    }
}

extension Problem {
    /// A 400 for one bad parameter.
    public static func invalidParameter(_ name: String, _ reason: String) -> Problem {
        Problem(
            .invalidRequest, status: .badRequest, detail: "\(name): \(reason)",
            invalidParameters: [InvalidParameter(name: name, reason: reason)])
    }
}

extension Problem.Kind {
    // Input and routing.
    public static let invalidRequest = Self("invalid-request", title: "The request is not valid")
    public static let notFound = Self("not-found", title: "No such resource")
    public static let methodNotAllowed = Self("method-not-allowed", title: "Method not allowed on this resource")
    public static let payloadTooLarge = Self("payload-too-large", title: "The request body is too large")
    public static let headersTooLarge = Self("headers-too-large", title: "The request headers are too large")
    public static let unsupportedMediaType = Self("unsupported-media-type", title: "Unsupported request body type")
    public static let unauthorized = Self("unauthorized", title: "A valid API key is required")
    public static let ambiguous = Self("ambiguous", title: "The name matches more than one attribute")
    public static let attributeRefused = Self(
        "attribute-refused", title: "The attribute's value cannot serve this offset or length")
    public static let internalError = Self("internal-error", title: "The gateway failed unexpectedly")
    public static let unavailable = Self("unavailable", title: "The gateway is not serving this request")
    /// The state store (`--state-dir`) could not save a change: the disk is
    /// full, the file became unwritable, ... Nothing was changed.
    public static let stateStoreFailed = Self(
        "state-store-failed", title: "The gateway's state store cannot save the change")
    /// The client holds as many of a resource as its quota allows (429).
    public static let quotaExceeded = Self("quota-exceeded", title: "This client's quota for the resource is used up")
    /// The gateway holds as many of a resource as it allows in all (507).
    public static let capacityExhausted = Self(
        "capacity-exhausted", title: "The gateway holds as many of the resource as it allows")
    /// A well-formed advertisement whose data does not fit in 31 bytes (422).
    public static let advertisementTooLarge = Self(
        "advertisement-too-large", title: "The advertisement does not fit in the 31 bytes of advertising data")
    // Bluetooth.
    public static let notConnected = Self("not-connected", title: "The device is not connected")
    public static let inProgress = Self("in-progress", title: "Another operation is in progress")
    public static let notPermitted = Self("not-permitted", title: "The operation is not permitted")
    public static let notAuthorized = Self("not-authorized", title: "The device requires pairing or authorization")
    public static let notSupported = Self("not-supported", title: "The operation is not supported")
    public static let adapterUnavailable = Self("adapter-unavailable", title: "The Bluetooth adapter is off or missing")
    /// Temporary: bluetoothd is not running or the D-Bus connection to it is
    /// lost; the gateway recovers by itself when it is back.
    public static let bluetoothdUnavailable = Self(
        "bluetoothd-unavailable", title: "BlueZ is unreachable (bluetoothd or the system bus is down)")
    /// Temporary: every adapter that could take the connection holds as
    /// many as its slot limit allows (`--connection-slots`).
    public static let noConnectionSlot = Self(
        "no-connection-slot", title: "No adapter has a free connection slot")
    public static let timeout = Self("timeout", title: "The operation timed out")
    public static let peripheralFailed = Self("peripheral-failed", title: "The peripheral reported an error")
    public static let bluetoothFailed = Self("bluetooth-failed", title: "BlueZ reported an error")
}
