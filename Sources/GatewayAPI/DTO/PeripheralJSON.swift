import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON of the peripheral routes: application and advertisement
/// definitions read from request bodies, published ones and events written.
enum PeripheralJSON {
    // MARK: Reading definitions

    static func application(_ body: JSONBody) throws(Problem) -> GATTApplication {
        var services: [GATTApplication.Service] = []
        for service in try body["services"].array() {
            try service.object(allowed: ["uuid", "primary", "characteristics"])
            var characteristics: [GATTApplication.Characteristic] = []
            for characteristic in try service["characteristics"].array() {
                try characteristic.object(allowed: ["uuid", "flags", "value", "encoding", "descriptors", "delegate"])
                let encoding = try ByteEncoding(parameter: try characteristic["encoding"].string())
                var descriptors: [GATTApplication.Descriptor] = []
                for descriptor in try characteristic["descriptors"].array() {
                    try descriptor.object(allowed: ["uuid", "flags", "value", "encoding"])
                    let descriptorEncoding = try ByteEncoding(parameter: try descriptor["encoding"].string())
                    descriptors.append(
                        GATTApplication.Descriptor(
                            uuid: try descriptor["uuid"].uuid(),
                            flags: (try descriptor["flags"].strings() ?? []).nonEmpty(or: ["read"]),
                            value: try descriptor["value"].bytes(descriptorEncoding)))
                }
                characteristics.append(
                    GATTApplication.Characteristic(
                        uuid: try characteristic["uuid"].uuid(),
                        flags: try characteristic["flags"].strings() ?? [],
                        value: try characteristic["value"].bytes(encoding), descriptors: descriptors,
                        delegated: try characteristic["delegate"].bool() ?? false))
            }
            services.append(
                GATTApplication.Service(
                    uuid: try service["uuid"].uuid(),
                    primary: try service["primary"].bool() ?? true, characteristics: characteristics))
        }
        return GATTApplication(services: services, label: try body["label"].string(maxLength: 128))
    }

    static let applicationFields: Set<String> = ["adapter", "label", "services"]

    static let advertisementFields: Set<String> = [
        "adapter", "type", "local_name", "service_uuids", "manufacturer_data", "service_data", "appearance",
        "discoverable", "include_tx_power", "tx_power", "min_interval_ms", "max_interval_ms", "encoding", "ibeacon",
        "eddystone_url",
    ]

    static func advertisement(_ body: JSONBody) throws(Problem) -> Advertisement {
        let encoding = try ByteEncoding(parameter: try body["encoding"].string())
        var advertisement = Advertisement()
        if let type = try body["type"].string() {
            guard let kind = Advertisement.Kind(rawValue: type) else {
                throw Problem.invalidParameter("type", "must be peripheral or broadcast, not '\(type)'")
            }
            advertisement.type = kind
        }
        advertisement.localName = try body["local_name"].string()
        for uuid in try body["service_uuids"].array() { advertisement.serviceUUIDs.append(try uuid.uuid()) }
        for (key, value) in try body["manufacturer_data"].members() {
            guard let company = CompanyIdentifier(parsing: key)?.rawValue else {
                throw Problem.invalidParameter("manufacturer_data", "'\(key)' is not a company identifier (0 to 65535, or hex as 0x004c)")
            }
            advertisement.manufacturerData[company] = try value.bytes(encoding)
        }
        for (key, value) in try body["service_data"].members() {
            let uuid = try JSONField(json: .string(key), path: "service_data").uuid()
            advertisement.serviceData[uuid] = try value.bytes(encoding)
        }
        advertisement.appearance = try body["appearance"].int(in: 0...0xFFFF).map(UInt16.init)
        advertisement.discoverable = try body["discoverable"].bool()
        advertisement.includeTxPower = try body["include_tx_power"].bool() ?? false
        advertisement.txPower = try body["tx_power"].int(in: -127...20).map(Int16.init)
        advertisement.minInterval = try body["min_interval_ms"].int(in: 20...10_485).map(UInt32.init)
        advertisement.maxInterval = try body["max_interval_ms"].int(in: 20...10_485).map(UInt32.init)
        if body["ibeacon"].json != nil { try iBeacon(body["ibeacon"], into: &advertisement) }
        if let url = try body["eddystone_url"].string() { try eddystoneURL(url, into: &advertisement) }
        return advertisement
    }

    /// Apple's iBeacon: manufacturer data of company 0x004C, type 0x02,
    /// length 0x15, the proximity UUID, major, minor and the measured power
    /// at 1 m. A beacon is not connectable (`broadcast`).
    static func iBeacon(_ field: JSONField, into advertisement: inout Advertisement) throws(Problem) {
        try field.object(allowed: ["uuid", "major", "minor", "measured_power"])
        let uuid = try field["uuid"].uuid()
        let major = try field["major"].int(in: 0...0xFFFF) ?? 0
        let minor = try field["minor"].int(in: 0...0xFFFF) ?? 0
        let power = try field["measured_power"].int(in: -127...20) ?? -59
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

    /// A peripheral event on `GET /v1/peripheral/events`, stamped `date`.
    static func event(_ event: PeripheralEvent, at date: Date) -> JSON {
        .object([("type", .string(event.type)), ("timestamp", ModelJSON.timestamp(date))] + members(of: event))
    }

    /// The data of a peripheral event, after its type and timestamp.
    private static func members(of event: PeripheralEvent) -> [(String, JSON)] {
        switch event {
        case .read(let access): Self.access(access)
        case .written(let access, let value): Self.access(access) + ByteEncoding.hex.members(value)
        case .request(let request):
            [("id", .string(request.id)), ("kind", .string(request.kind.rawValue))] + Self.access(request.access)
                + [("offset", .int(Int(request.offset))), ("timeout_ms", .int(request.timeoutMilliseconds))]
                + (request.value.map { ByteEncoding.hex.members($0) } ?? [])
        case .requestExpired(let id, let access): [("id", .string(id))] + Self.access(access)
        case .subscribed(let access): Self.access(access)
        case .unsubscribed(let access): Self.access(access)
        case .centralSeen(let application, let adapter, let device):
            [("application", .string(application)), ("adapter", .string(adapter)), ("central", .string(device.description))]
        case .centralGone(let application, let adapter, let device, let reason):
            [("application", .string(application)), ("adapter", .string(adapter)), ("central", .string(device.description))]
                + (reason.map { [("reason", .string($0))] } ?? [])
        case .reregistered(let kind, let id, let error):
            [("kind", .string(kind)), ("id", .string(id))] + (error.map { [("error", .string($0))] } ?? [])
        }
    }
}

extension Array where Element == String {
    fileprivate func nonEmpty(or fallback: [String]) -> [String] { isEmpty ? fallback : self }
}
