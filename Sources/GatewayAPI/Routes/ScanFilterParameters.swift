import BlueZ
import HTTPServer

/// The advertisement filters and options of a scan, read alike from
/// `GET /v1/scan`'s query and `POST /v1/scan`'s body: the same fields, the
/// same spellings of their values and the same 400s. Only the service lists
/// are named after their form: `service` in the query (repeated or
/// comma-separated), `services` in the body (an array).
struct ScanFilterParameters {
    /// The body's field names, for its list of allowed fields.
    static let names: Set<String> = [
        "services", "name", "name_prefix", "rssi", "manufacturer", "duplicates", "address", "address_prefix",
        "service_data", "min_interval_ms", "presence_timeout_ms", "rssi_smoothing",
    ]
    /// The longest name a device can have (a Core Specification limit).
    static let maximumNameLength = 248
    /// The RSSI a filter may ask for, in dBm.
    static let rssiRange = -127...20
    /// The longest presence timeout a client may ask for: a day.
    static let presenceTimeouts = 100...86_400_000
    /// The longest minimum interval between updates: an hour.
    static let updateIntervals = 0...3_600_000

    var services: [BluetoothUUID] = []
    var name: String?
    var namePrefix: String?
    var rssi: Int?
    var manufacturer: UInt16?
    var duplicates: Bool?
    var address: String?
    var addressPrefix: String?
    var serviceData: [String] = []
    var minimumIntervalMilliseconds: Int?
    var presenceTimeoutMilliseconds: Int?
    var rssiSmoothing: Double?

    /// From the query.
    init(query request: Request) throws(Problem) {
        services = try request.uuidList("service")
        name = try request.text("name", maxLength: Self.maximumNameLength)
        namePrefix = try request.text("name_prefix", maxLength: Self.maximumNameLength)
        rssi = try request.integer("rssi", in: Self.rssiRange)
        manufacturer = try request.query["manufacturer"].map { (text) throws(Problem) in try Self.companyID(text) }
        duplicates = try request.bool("duplicates")
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

    /// From a JSON body (`services` and `service_data` arrays of UUIDs;
    /// `manufacturer` a number, or a string as in the query).
    init(body: JSONBody) throws(Problem) {
        for text in try body["services"].strings() ?? [] {
            services.append(try Request.uuid(text, parameter: "services"))
        }
        name = try body["name"].string(maxLength: Self.maximumNameLength)
        namePrefix = try body["name_prefix"].string(maxLength: Self.maximumNameLength)
        rssi = try body["rssi"].int(in: Self.rssiRange)
        switch body["manufacturer"].json {
        case nil: break
        case .int(let value)?:
            guard let id = UInt16(exactly: value) else { throw Self.companyIDProblem("\(value)") }
            manufacturer = id
        case .string(let text)?: manufacturer = try Self.companyID(text)
        default: throw Self.companyIDProblem("a value of another kind")
        }
        duplicates = try body["duplicates"].bool()
        address = try body["address"].string(maxLength: 64)
        addressPrefix = try body["address_prefix"].string(maxLength: 64)
        serviceData = try body["service_data"].strings() ?? []
        minimumIntervalMilliseconds = try body["min_interval_ms"].int(in: Self.updateIntervals)
        presenceTimeoutMilliseconds = try body["presence_timeout_ms"].int(in: Self.presenceTimeouts)
        switch body["rssi_smoothing"].json {
        case nil: break
        case .double(let value)?: rssiSmoothing = value
        case .int(let value)?: rssiSmoothing = Double(value)
        default: throw Self.smoothingProblem("a non-number")
        }
    }

    /// The discovery filter these parameters ask for; a presence timeout the
    /// client did not give is `defaultPresenceTimeout`.
    func filter(defaultPresenceTimeout: Duration?) throws(Problem) -> DiscoveryFilter {
        var filter = DiscoveryFilter()
        filter.serviceUUIDs = services
        filter.name = name
        filter.namePrefix = namePrefix
        filter.minimumRSSI = rssi.map(Int16.init)
        filter.manufacturerID = manufacturer
        filter.allowDuplicates = duplicates ?? false
        if let address { filter.address = try Request.bluetoothAddress(address, parameter: "address") }
        if let addressPrefix { filter.addressPrefix = try Self.addressPrefix(addressPrefix) }
        for text in serviceData {
            filter.serviceDataUUIDs.append(try Request.uuid(text, parameter: "service_data"))
        }
        filter.minimumUpdateInterval = minimumIntervalMilliseconds.map { Duration.milliseconds($0) }
        filter.presenceTimeout = presenceTimeoutMilliseconds.map { Duration.milliseconds($0) } ?? defaultPresenceTimeout
        if let rssiSmoothing {
            guard rssiSmoothing > 0, rssiSmoothing <= 1 else { throw Self.smoothingProblem("\(rssiSmoothing)") }
            filter.rssiSmoothing = rssiSmoothing
        }
        return filter
    }

    /// A company id, decimal (`76`) or 0x-hex (`0x004c`).
    static func companyID(_ text: String) throws(Problem) -> UInt16 {
        guard let id = CompanyIdentifier(parsing: text) else { throw companyIDProblem("'\(text)'") }
        return id.rawValue
    }

    static func companyIDProblem(_ text: String) -> Problem {
        Problem.invalidParameter("manufacturer", "\(text) is not a company id (76 or 0x004c)")
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
