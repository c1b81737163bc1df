import Foundation

/// The shapes of the gateway's JSON (openapi.yaml), as far as this library
/// reads or writes them. Bytes travel as hex.
public enum GatewayJSON {
    public struct Info: Decodable, Sendable {
        public struct BlueZ: Decodable, Sendable {
            public var available: Bool
            public var simulated: Bool?
        }
        public var name: String
        public var version: String
        public var bluez: BlueZ
        public var adapters: [Adapter]
    }

    public struct Adapter: Decodable, Sendable {
        public var name: String
        public var address: String
        public var powered: Bool
        public var discovering: Bool
        public var state: String
    }

    public struct ManufacturerData: Decodable, Sendable {
        public var companyId: Int
        public var value: String
    }

    public struct ServiceData: Decodable, Sendable {
        public var uuid: String
        public var value: String
    }

    public struct Device: Decodable, Sendable {
        public var address: String
        public var adapter: String
        public var name: String?
        public var alias: String?
        public var rssi: Int?
        public var txPower: Int?
        public var serviceUuids: [String]?
        public var manufacturerData: [String: ManufacturerData]?
        public var serviceData: [String: ServiceData]?
        public var mtu: Int?
        public var connected: Bool
        public var paired: Bool
        public var servicesResolved: Bool
    }

    /// One device as the whole fleet knows it (`GET /v1/fleet/devices`), as
    /// far as a central reads it.
    public struct FleetDevice: Decodable, Sendable {
        public struct Hearing: Decodable, Sendable {
            public var gateway: String
            public var adapter: String?
            public var rssi: Int
        }
        public var address: String
        public var heardBy: [Hearing]
        public var connectedOn: [String]
        /// The gateway that holds it for the fleet, when the fleet keeps it.
        public var owner: String?
        /// The strongest signal a gateway hears it with.
        public var rssi: Int? { heardBy.map(\.rssi).max() }
    }

    public struct Descriptor: Decodable, Sendable {
        public var uuid: String
        public var handle: Int
        public var flags: [String]
        public var name: String?
    }

    public struct Characteristic: Decodable, Sendable {
        public var uuid: String
        public var handle: Int
        public var service: String
        public var flags: [String]
        public var name: String?
        public var notifying: Bool?
        public var descriptors: [Descriptor]
    }

    public struct Service: Decodable, Sendable {
        public var uuid: String
        public var primary: Bool
        public var handle: Int
        public var name: String?
        public var characteristics: [Characteristic]
    }

    public struct Value: Codable, Sendable {
        public var value: String
        public var encoding: String = "hex"
        public init(hex: String) { value = hex }
    }

    public struct Write: Encodable, Sendable {
        public var value: String
        public var encoding = "hex"
        public var type: String
    }

    public struct ScanEvent: Decodable, Sendable {
        public var device: Device
    }

    public struct KeptConnection: Decodable, Sendable {
        public var adapter: String
        public var address: String
        public var status: String
        public var label: String?
    }

    public struct StandingSubscription: Decodable, Sendable {
        public var id: Int
        public var adapter: String
        public var device: String
        public var characteristic: String
        public var service: String?
        public var status: String
    }

    /// One event of `GET /v1/events`.
    public struct Event: Decodable, Sendable {
        public var type: String
        public var adapter: String?
        public var state: String?
        public var address: String?
        public var reason: String?
        public var characteristic: String?
        public var service: String?
        public var handle: Int?
        public var value: String?
        public var device: Device?
    }

    /// One event of a notification stream.
    public struct Notification: Decodable, Sendable {
        public var address: String
        public var characteristic: String
        public var handle: Int?
        public var value: String
    }

    /// One event of `GET /v1/peripheral/events`.
    public struct PeripheralEvent: Decodable, Sendable {
        public var type: String
        public var id: String?
        public var kind: String?
        public var application: String?
        public var service: String?
        public var characteristic: String?
        public var central: String?
        public var offset: Int?
        public var value: String?
        public var reason: String?
    }

    public struct PublishedApplication: Decodable, Sendable {
        public struct Characteristic: Decodable, Sendable {
            public var uuid: String
            public var flags: [String]
            public var delegate: Bool
            public var notifying: Bool
            public var value: String
        }
        public struct Service: Decodable, Sendable {
            public var uuid: String
            public var primary: Bool
            public var characteristics: [Characteristic]
        }
        public var id: String
        public var adapter: String
        public var registered: Bool
        public var label: String?
        public var services: [Service]
    }

    public struct PublishedAdvertisement: Decodable, Sendable {
        public var id: String
        public var localName: String?
        public var serviceUuids: [String]
    }
}

/// Bytes as the gateway writes them by default: lowercase hex.
enum Hex {
    static func encode(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of hex text; nil if it is not hex.
    static func decode(_ text: String) -> Data? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var data = Data(capacity: utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
