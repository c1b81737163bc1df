import BlueZ
import Foundation

/// The JSON of the peripheral routes: application and advertisement
/// definitions read from request bodies, published ones and events written.
enum PeripheralJSON {
    // MARK: Reading definitions

    /// A field of a nested object, with its path for error messages.
    struct Field {
        let json: JSON?
        let path: String

        func string() throws(Problem) -> String? {
            switch json {
            case nil: return nil
            case .string(let value)?: return value
            default: throw Problem.invalidParameter(path, "must be a string")
            }
        }

        func required() throws(Problem) -> String {
            guard let value = try string() else { throw Problem.invalidParameter(path, "is required") }
            return value
        }

        func bool() throws(Problem) -> Bool? {
            switch json {
            case nil: return nil
            case .bool(let value)?: return value
            default: throw Problem.invalidParameter(path, "must be true or false")
            }
        }

        func int(in range: ClosedRange<Int>) throws(Problem) -> Int? {
            switch json {
            case nil: return nil
            case .int(let value)? where range.contains(value): return value
            default: throw Problem.invalidParameter(path, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
            }
        }

        func array() throws(Problem) -> [Field] {
            switch json {
            case nil: return []
            case .array(let elements)?: return elements.enumerated().map { Field(json: $1, path: "\(path)[\($0)]") }
            default: throw Problem.invalidParameter(path, "must be an array")
            }
        }

        func object(allowed: Set<String>) throws(Problem) -> [(String, JSON)] {
            switch json {
            case nil: return []
            case .object(let members)?:
                if let unknown = members.first(where: { !allowed.contains($0.0) }) {
                    throw Problem.invalidParameter(
                        "\(path).\(unknown.0)", "is not a field here (fields: \(allowed.sorted().joined(separator: ", ")))")
                }
                return members
            default: throw Problem.invalidParameter(path, "must be an object")
            }
        }

        func members() throws(Problem) -> [(String, JSON)] {
            switch json {
            case nil: return []
            case .object(let members)?: return members
            default: throw Problem.invalidParameter(path, "must be an object")
            }
        }

        subscript(_ key: String, in members: [(String, JSON)]) -> Field {
            Field(json: members.first { $0.0 == key }?.1, path: "\(path).\(key)")
        }

        func uuid() throws(Problem) -> BluetoothUUID {
            let text = try required()
            do {
                return try BluetoothUUID(parsing: text)
            } catch {
                throw Problem.invalidParameter(path, error.message)
            }
        }

        func strings() throws(Problem) -> [String] {
            var strings: [String] = []
            for element in try array() { strings.append(try element.required()) }
            return strings
        }

        /// Bytes given as text in `encoding`.
        func bytes(_ encoding: ByteEncoding) throws(Problem) -> [UInt8] {
            guard let text = try string() else { return [] }
            return try encoding.decode(text, field: path)
        }
    }

    static func application(_ body: JSONBody) throws(Problem) -> GATTApplication {
        let root = Field(json: body["services"], path: "services")
        var services: [GATTApplication.Service] = []
        for service in try root.array() {
            let members = try service.object(allowed: ["uuid", "primary", "characteristics"])
            var characteristics: [GATTApplication.Characteristic] = []
            for characteristic in try service["characteristics", in: members].array() {
                let fields = try characteristic.object(
                    allowed: ["uuid", "flags", "value", "encoding", "descriptors", "delegate"])
                let encoding = try ByteEncoding(parameter: try characteristic["encoding", in: fields].string())
                var descriptors: [GATTApplication.Descriptor] = []
                for descriptor in try characteristic["descriptors", in: fields].array() {
                    let d = try descriptor.object(allowed: ["uuid", "flags", "value", "encoding"])
                    let dEncoding = try ByteEncoding(parameter: try descriptor["encoding", in: d].string())
                    descriptors.append(
                        GATTApplication.Descriptor(
                            uuid: try descriptor["uuid", in: d].uuid(),
                            flags: try descriptor["flags", in: d].strings().nonEmpty(or: ["read"]),
                            value: try descriptor["value", in: d].bytes(dEncoding)))
                }
                characteristics.append(
                    GATTApplication.Characteristic(
                        uuid: try characteristic["uuid", in: fields].uuid(),
                        flags: try characteristic["flags", in: fields].strings(),
                        value: try characteristic["value", in: fields].bytes(encoding), descriptors: descriptors,
                        delegated: try characteristic["delegate", in: fields].bool() ?? false))
            }
            services.append(
                GATTApplication.Service(
                    uuid: try service["uuid", in: members].uuid(),
                    primary: try service["primary", in: members].bool() ?? true, characteristics: characteristics))
        }
        return GATTApplication(services: services, label: try body.string("label", maxLength: 128))
    }

    static let advertisementFields: Set<String> = [
        "adapter", "type", "local_name", "service_uuids", "manufacturer_data", "service_data", "appearance",
        "discoverable", "include_tx_power", "tx_power", "min_interval_ms", "max_interval_ms", "encoding", "ibeacon",
        "eddystone_url",
    ]

    static func advertisement(_ body: JSONBody) throws(Problem) -> Advertisement {
        func field(_ name: String) -> Field { Field(json: body[name], path: name) }
        let encoding = try ByteEncoding(parameter: try field("encoding").string())
        var advertisement = Advertisement()
        if let type = try field("type").string() {
            guard let kind = Advertisement.Kind(rawValue: type) else {
                throw Problem.invalidParameter("type", "must be peripheral or broadcast, not '\(type)'")
            }
            advertisement.type = kind
        }
        advertisement.localName = try field("local_name").string()
        for uuid in try field("service_uuids").array() { advertisement.serviceUUIDs.append(try uuid.uuid()) }
        for (key, value) in try field("manufacturer_data").members() {
            guard let company = CompanyIdentifier(parsing: key)?.rawValue else {
                throw Problem.invalidParameter("manufacturer_data", "'\(key)' is not a company identifier (0 to 65535, or hex as 0x004c)")
            }
            advertisement.manufacturerData[company] = try Field(json: value, path: "manufacturer_data.\(key)").bytes(encoding)
        }
        for (key, value) in try field("service_data").members() {
            let uuid = try Field(json: .string(key), path: "service_data").uuid()
            advertisement.serviceData[uuid] = try Field(json: value, path: "service_data.\(key)").bytes(encoding)
        }
        advertisement.appearance = try field("appearance").int(in: 0...0xFFFF).map(UInt16.init)
        advertisement.discoverable = try field("discoverable").bool()
        advertisement.includeTxPower = try field("include_tx_power").bool() ?? false
        advertisement.txPower = try field("tx_power").int(in: -127...20).map(Int16.init)
        advertisement.minInterval = try field("min_interval_ms").int(in: 20...10_485).map(UInt32.init)
        advertisement.maxInterval = try field("max_interval_ms").int(in: 20...10_485).map(UInt32.init)
        if body["ibeacon"] != nil { try iBeacon(field("ibeacon"), into: &advertisement) }
        if let url = try field("eddystone_url").string() { try eddystoneURL(url, into: &advertisement) }
        return advertisement
    }

    /// Apple's iBeacon: manufacturer data of company 0x004C, type 0x02,
    /// length 0x15, the proximity UUID, major, minor and the measured power
    /// at 1 m. A beacon is not connectable (`broadcast`).
    static func iBeacon(_ field: Field, into advertisement: inout Advertisement) throws(Problem) {
        let members = try field.object(allowed: ["uuid", "major", "minor", "measured_power"])
        let uuid = try field["uuid", in: members].uuid()
        let major = try field["major", in: members].int(in: 0...0xFFFF) ?? 0
        let minor = try field["minor", in: members].int(in: 0...0xFFFF) ?? 0
        let power = try field["measured_power", in: members].int(in: -127...20) ?? -59
        var bytes: [UInt8] = [0x02, 0x15]
        let raw = uuid.rawValue
        for shift in stride(from: 120, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: raw >> UInt128(shift))) }
        bytes += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
        bytes.append(UInt8(bitPattern: Int8(power)))
        advertisement.manufacturerData[0x004C] = bytes
        advertisement.type = .broadcast
    }

    /// Eddystone-URL: service data of 0xFEAA (frame type 0x10, TX power at
    /// 0 m, the URL scheme code and the URL with its expansion codes), and
    /// 0xFEAA in the service UUIDs.
    static func eddystoneURL(_ url: String, into advertisement: inout Advertisement) throws(Problem) {
        let schemes = ["http://www.", "https://www.", "http://", "https://"]
        guard let scheme = schemes.firstIndex(where: { url.hasPrefix($0) }) else {
            throw Problem.invalidParameter("eddystone_url", "must start with http:// or https://")
        }
        var rest = Substring(url.dropFirst(schemes[scheme].count))
        let expansions = [
            ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info",
            ".biz", ".gov",
        ]
        var encoded: [UInt8] = []
        while !rest.isEmpty {
            if let code = expansions.firstIndex(where: { rest.hasPrefix($0) }) {
                encoded.append(UInt8(code))
                rest = rest.dropFirst(expansions[code].count)
            } else {
                encoded += Array(String(rest.prefix(1)).utf8)
                rest = rest.dropFirst()
            }
        }
        guard encoded.count <= 17 else {
            throw Problem.invalidParameter("eddystone_url", "encodes to \(encoded.count) bytes; Eddystone-URL takes at most 17")
        }
        let eddystone = BluetoothUUID(uuid16: 0xFEAA)
        advertisement.serviceData[eddystone] = [0x10, 0xEB, UInt8(scheme)] + encoded
        if !advertisement.serviceUUIDs.contains(eddystone) { advertisement.serviceUUIDs.append(eddystone) }
        advertisement.type = .broadcast
    }

    // MARK: Writing

    static func application(_ application: PublishedApplication, encoding: ByteEncoding) -> JSON {
        var index = 0
        let services = application.definition.services.map { service -> JSON in
            let characteristics = service.characteristics.map { characteristic -> JSON in
                defer { index += 1 }
                return .object(
                    [
                        ("uuid", .string(characteristic.uuid.uuidString)),
                        ("flags", .array(characteristic.flags.map(JSON.string))),
                        ("delegate", .bool(characteristic.delegated)),
                        ("notifying", .bool(application.notifying[index])),
                    ] + encoding.members(application.values[index]) + [
                        ("descriptors", .array(characteristic.descriptors.map { descriptor in
                            .object(
                                [("uuid", .string(descriptor.uuid.uuidString)), ("flags", .array(descriptor.flags.map(JSON.string)))]
                                    + encoding.members(descriptor.value))
                        }))
                    ])
            }
            return .object([
                ("uuid", .string(service.uuid.uuidString)), ("primary", .bool(service.primary)),
                ("characteristics", .array(characteristics)),
            ])
        }
        var members: [(String, JSON)] = [("id", .string(application.id)), ("adapter", .string(application.adapter))]
        if let label = application.definition.label { members.append(("label", .string(label))) }
        return .object(members + [("registered", .bool(application.registered)), ("services", .array(services))])
    }

    static func advertisement(_ published: PublishedAdvertisement) -> JSON {
        let ad = published.definition
        var members: [(String, JSON)] = [
            ("id", .string(published.id)), ("adapter", .string(published.adapter)),
            ("registered", .bool(published.registered)), ("type", .string(ad.type.rawValue)),
        ]
        if let name = ad.localName { members.append(("local_name", .string(name))) }
        members.append(("service_uuids", .array(ad.serviceUUIDs.map { .string($0.uuidString) })))
        members.append(
            ("manufacturer_data", .object(ad.manufacturerData.sorted { $0.key < $1.key }.map { (String($0.key), .string(ByteEncoding.hex($0.value))) })))
        members.append(
            ("service_data", .object(ad.serviceData.sorted { $0.key.uuidString < $1.key.uuidString }.map { ($0.key.uuidString, .string(ByteEncoding.hex($0.value))) })))
        if let appearance = ad.appearance { members.append(("appearance", .int(Int(appearance)))) }
        if let discoverable = ad.discoverable { members.append(("discoverable", .bool(discoverable))) }
        members.append(("include_tx_power", .bool(ad.includeTxPower)))
        if let txPower = ad.txPower { members.append(("tx_power", .int(Int(txPower)))) }
        if let minInterval = ad.minInterval { members.append(("min_interval_ms", .int(Int(minInterval)))) }
        if let maxInterval = ad.maxInterval { members.append(("max_interval_ms", .int(Int(maxInterval)))) }
        members.append(("data_length", .int(ad.dataLength)))
        return .object(members)
    }

    static func access(_ access: AttributeAccess) -> [(String, JSON)] {
        var members: [(String, JSON)] = [
            ("application", .string(access.application)), ("adapter", .string(access.adapter)),
            ("service", .string(access.service.uuidString)), ("characteristic", .string(access.characteristic.uuidString)),
        ]
        if let device = access.device { members.append(("central", .string(device.description))) }
        return members
    }

    /// The event type and data of a peripheral event on `GET /v1/peripheral/events`.
    static func event(_ event: PeripheralEvent) -> (type: String, data: [(String, JSON)]) {
        switch event {
        case .read(let access): ("read", Self.access(access))
        case .written(let access, let value): ("written", Self.access(access) + ByteEncoding.hex.members(value))
        case .request(let request):
            ("request",
             [("id", .string(request.id)), ("kind", .string(request.kind.rawValue))] + Self.access(request.access)
                + [("offset", .int(Int(request.offset))), ("timeout_ms", .int(request.timeoutMilliseconds))]
                + (request.value.map { ByteEncoding.hex.members($0) } ?? []))
        case .requestExpired(let id, let access): ("request-expired", [("id", .string(id))] + Self.access(access))
        case .subscribed(let access): ("subscribed", Self.access(access))
        case .unsubscribed(let access): ("unsubscribed", Self.access(access))
        case .centralSeen(let application, let adapter, let device):
            ("central-connected",
             [("application", .string(application)), ("adapter", .string(adapter)), ("central", .string(device.description))])
        case .centralGone(let application, let adapter, let device, let reason):
            ("central-disconnected",
             [("application", .string(application)), ("adapter", .string(adapter)), ("central", .string(device.description))]
                + (reason.map { [("reason", .string($0))] } ?? []))
        case .reregistered(let kind, let id, let error):
            ("reregistered", [("kind", .string(kind)), ("id", .string(id))] + (error.map { [("error", .string($0))] } ?? []))
        }
    }

    static let eventTypes: Set<String> = [
        "read", "written", "request", "request-expired", "subscribed", "unsubscribed", "central-connected", "central-disconnected",
        "reregistered",
    ]
}

extension Array where Element == String {
    fileprivate func nonEmpty(or fallback: [String]) -> [String] { isEmpty ? fallback : self }
}
