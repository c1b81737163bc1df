import BlueZ
import HTTPServer

/// The advertisement filters and options of a scan, read alike from
/// `GET /v1/scan`'s query and `POST /v1/scan`'s body: `address`,
/// `address_prefix`, `service_data`, `min_interval_ms`,
/// `presence_timeout_ms` and `rssi_smoothing`.
struct ScanFilterParameters {
    /// The names, for a body's list of allowed fields.
    static let names: Set<String> = [
        "address", "address_prefix", "service_data", "min_interval_ms", "presence_timeout_ms", "rssi_smoothing",
    ]
    /// The longest presence timeout a client may ask for: a day.
    static let presenceTimeouts = 100...86_400_000
    /// The longest minimum interval between updates: an hour.
    static let updateIntervals = 0...3_600_000

    var address: String?
    var addressPrefix: String?
    var serviceData: [String] = []
    var minimumIntervalMilliseconds: Int?
    var presenceTimeoutMilliseconds: Int?
    var rssiSmoothing: Double?

    /// From the query.
    init(query request: Request) throws(Problem) {
        address = try request.text("address", maxLength: 64)
        addressPrefix = try request.text("address_prefix", maxLength: 64)
        serviceData = request.query.values(for: "service_data").flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        minimumIntervalMilliseconds = try request.integer("min_interval_ms", in: Self.updateIntervals)
        presenceTimeoutMilliseconds = try request.integer("presence_timeout_ms", in: Self.presenceTimeouts)
        if let text = request.query["rssi_smoothing"] {
            // A JSON number, as the body takes it (not Swift's hex floats, nan or inf).
            switch try? JSON.parse(Array(text.utf8)) {
            case .double(let value)?: rssiSmoothing = value
            case .int(let value)?: rssiSmoothing = Double(value)
            default: throw Self.smoothingProblem(text)
            }
        }
    }

    /// From a JSON body (`service_data` an array of UUIDs).
    init(body: JSONBody) throws(Problem) {
        address = try body.string("address", maxLength: 64)
        addressPrefix = try body.string("address_prefix", maxLength: 64)
        serviceData = try body.strings("service_data") ?? []
        minimumIntervalMilliseconds = try body.int("min_interval_ms", in: Self.updateIntervals)
        presenceTimeoutMilliseconds = try body.int("presence_timeout_ms", in: Self.presenceTimeouts)
        switch body["rssi_smoothing"] {
        case nil: break
        case .double(let value)?: rssiSmoothing = value
        case .int(let value)?: rssiSmoothing = Double(value)
        default: throw Self.smoothingProblem("a non-number")
        }
    }

    /// Checks the values and sets them on `filter`; a presence timeout the
    /// client did not give is `defaultPresenceTimeout`.
    func apply(to filter: inout DiscoveryFilter, defaultPresenceTimeout: Duration?) throws(Problem) {
        if let address { filter.address = try Request.bluetoothAddress(address, parameter: "address") }
        if let addressPrefix { filter.addressPrefix = try Self.addressPrefix(addressPrefix) }
        for text in serviceData {
            do {
                filter.serviceDataUUIDs.append(try BluetoothUUID(parsing: text))
            } catch {
                throw Problem.invalidParameter("service_data", error.message)
            }
        }
        filter.minimumUpdateInterval = minimumIntervalMilliseconds.map { Duration.milliseconds($0) }
        filter.presenceTimeout = presenceTimeoutMilliseconds.map { Duration.milliseconds($0) } ?? defaultPresenceTimeout
        if let rssiSmoothing {
            guard rssiSmoothing > 0, rssiSmoothing <= 1 else { throw Self.smoothingProblem("\(rssiSmoothing)") }
            filter.rssiSmoothing = rssiSmoothing
        }
    }

    /// `C4:7C`, `c4-7c` or `c47c` as the uppercase hex digits `C47C`.
    static func addressPrefix(_ text: String) throws(Problem) -> String {
        let digits = text.uppercased().filter { $0 != ":" && $0 != "-" }
        guard (1...12).contains(digits.count), digits.allSatisfy(\.isHexDigit) else {
            throw Problem.invalidParameter(
                "address_prefix", "'\(text)' is not the start of an address (1 to 12 hex digits, as C4:7C or c47c)")
        }
        return digits
    }

    static func smoothingProblem(_ text: String) -> Problem {
        Problem.invalidParameter(
            "rssi_smoothing", "must be a number above 0 and at most 1 (the newest report's weight), not \(text)")
    }
}
