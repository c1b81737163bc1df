import BlueZ
import GatewayCore
import HTTPServer

/// Reading path and query parameters, each mistake a 400 that names the
/// parameter.
extension Request {
    /// A path parameter the route pattern guarantees.
    func pathParameter(_ name: String) -> String {
        parameters[name] ?? ""
    }

    /// The device address in the path, in any accepted spelling.
    func address() throws(Problem) -> BluetoothAddress {
        try Self.bluetoothAddress(pathParameter("address"), parameter: "address")
    }

    static func bluetoothAddress(_ text: String, parameter: String) throws(Problem) -> BluetoothAddress {
        do {
            return try DeviceTarget.address(text, parameter: parameter)
        } catch {
            throw Problem(error)
        }
    }

    /// `?adapter=`: an adapter name such as `hci0`, or nil.
    func adapterQuery(default fallback: String?) throws(Problem) -> String? {
        guard let name = query["adapter"] else { return fallback }
        try Self.checkAdapterName(name, parameter: "adapter")
        return name
    }

    /// A 400 naming `parameter` unless `name` follows `AdapterName`'s rule.
    static func checkAdapterName(_ name: String, parameter: String) throws(Problem) {
        do {
            _ = try DeviceTarget.adapterName(name, parameter: parameter)
        } catch {
            throw Problem(error)
        }
    }

    /// A characteristic or descriptor named in the path: a UUID, or
    /// `handle:N` (decimal or 0x-hex).
    func attribute(_ name: String, service: BluetoothUUID?) throws(Problem) -> AttributeSelector {
        try Self.attribute(pathParameter(name), parameter: name, service: service)
    }

    /// A characteristic or descriptor named by `text`: a UUID, or
    /// `handle:N` (decimal or 0x-hex).
    static func attribute(_ text: String, parameter name: String, service: BluetoothUUID?) throws(Problem) -> AttributeSelector {
        do {
            return try CharacteristicTarget.attribute(text, parameter: name, service: service)
        } catch {
            throw Problem(error)
        }
    }

    func uuid(_ text: String, parameter: String) throws(Problem) -> BluetoothUUID {
        try Self.uuid(text, parameter: parameter)
    }

    static func uuid(_ text: String, parameter: String) throws(Problem) -> BluetoothUUID {
        do {
            return try CharacteristicTarget.uuid(text, parameter: parameter)
        } catch {
            throw Problem(error)
        }
    }

    /// `?service=` for narrowing an attribute lookup: one UUID or nil.
    func serviceQuery() throws(Problem) -> BluetoothUUID? {
        try query["service"].map { (text) throws(Problem) in try uuid(text, parameter: "service") }
    }

    /// Repeated or comma-separated UUIDs of a query parameter.
    func uuidList(_ name: String) throws(Problem) -> [BluetoothUUID] {
        var uuids: [BluetoothUUID] = []
        for value in query.values(for: name) {
            for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                uuids.append(try uuid(String(part), parameter: name))
            }
        }
        return uuids
    }

    /// A text query parameter of bounded length.
    func text(_ name: String, maxLength: Int) throws(Problem) -> String? {
        guard let value = query[name] else { return nil }
        guard value.count <= maxLength else {
            throw Problem.invalidParameter(name, "must be at most \(maxLength) characters")
        }
        return value
    }

    /// A boolean query parameter (`true`/`false`, `1`/`0`).
    func bool(_ name: String) throws(Problem) -> Bool? {
        guard let text = query[name] else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw Problem.invalidParameter(name, "must be true or false, not '\(text)'")
        }
    }

    /// An integer query parameter within `range`.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw Problem.invalidParameter(
                name, "must be an integer from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// `?timeout_ms=`, bounded by the gateway's maximum.
    func timeout(maximum: Duration) throws(Problem) -> Duration? {
        return try integer("timeout_ms", in: 1...max(1, maximum.milliseconds)).map { Duration.milliseconds($0) }
    }

    /// `?duration_ms=` of a stream: how long it stays open at most (a day
    /// at most); nil keeps it open while its client is there.
    func streamLifetime() throws(Problem) -> Duration? {
        try integer("duration_ms", in: 1...86_400_000).map { Duration.milliseconds($0) }
    }

    /// `?pair=` of a GATT operation: `auto` pairs when the peripheral
    /// refuses for want of pairing, and runs the operation once more.
    func pairingPolicy() throws(Problem) -> PairingPolicy {
        do {
            return try PairingPolicy(parsing: query["pair"])
        } catch {
            throw Problem(error)
        }
    }

    /// `?encoding=`.
    func encoding() throws(Problem) -> ByteEncoding {
        try ByteEncoding(parameter: query["encoding"])
    }

    /// Whether the client asked for raw bytes rather than JSON.
    var wantsRawBytes: Bool {
        guard let accept = headers["Accept"]?.lowercased() else { return false }
        return accept.contains("application/octet-stream") && !accept.contains("application/json")
    }


    /// `Last-Event-ID` (header) or `?last_event_id=`.
    func lastEventID() throws(Problem) -> UInt64? {
        guard let text = headers["Last-Event-ID"] ?? query["last_event_id"] else { return nil }
        let trimmed = text.trimming(where: { $0.isWhitespace && !$0.isNewline })
        if trimmed.isEmpty { return nil }
        guard trimmed.utf8.count <= 19, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let id = UInt64(trimmed)
        else {
            throw Problem.invalidParameter("Last-Event-ID", "'\(text)' is not an event id")
        }
        return id
    }
}
