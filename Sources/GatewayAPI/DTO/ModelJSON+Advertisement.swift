import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ModelJSON {
    /// The members a device's JSON adds about its advertisements: the AD
    /// structures bluetoothd keeps raw (`advertising_data`, by AD type),
    /// what the decoders read (`decoded`), when it was last heard
    /// (`last_seen`) and its smoothed RSSI in a session that smooths.
    static func advertisementDetails(_ device: Device) -> [(String, JSON)] {
        var members: [(String, JSON)] = []
        let other = device.advertisement.otherData
        if !other.isEmpty {
            members.append(
                (
                    "advertising_data",
                    .object(other.keys.sorted().map { type in
                        (ByteEncoding.hex([type]), .string(ByteEncoding.hex(other[type] ?? [])))
                    })
                ))
        }
        members.append(("decoded", .array(device.advertisement.decoded.map(decoded))))
        if let lastSeen = device.lastSeen { members.append(("last_seen", timestamp(lastSeen))) }
        if let smoothed = device.smoothedRSSI { members.append(("rssi_smoothed", .double(smoothed))) }
        return members
    }

    /// One decoded payload: `format`, where it was (`company_id` or
    /// `service_uuid`), then its fields.
    static func decoded(_ result: DecodedAdvertisement) -> JSON {
        var members: [(String, JSON)] = [("format", .string(result.format))]
        switch result.source {
        case .manufacturer(let company): members.append(("company_id", .int(Int(company.rawValue))))
        case .serviceData(let uuid): members.append(("service_uuid", .string(uuid.uuidString)))
        }
        for field in result.fields {
            let value: JSON =
                switch field.value {
                case .integer(let number): .int(number)
                case .number(let number): .double(number)
                case .text(let text): .string(text)
                case .flag(let flag): .bool(flag)
                case .bytes(let bytes): .string(ByteEncoding.hex(bytes))
                }
            members.append((field.name, value))
        }
        return .object(members)
    }
}

extension ModelJSON {
    /// The services `service` includes (BlueZ's `Includes`), each by UUID
    /// and handle.
    static func includes(of service: GATTService) -> [JSON] {
        service.includedServices.map { included in
            .object([("uuid", .string(included.uuid.uuidString)), ("handle", .int(Int(included.handle ?? 0)))])
        }
    }
}
