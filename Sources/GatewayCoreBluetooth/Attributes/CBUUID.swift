import Foundation

/// A Bluetooth UUID: 16-bit (`180D`), 32-bit or 128-bit. Two UUIDs are
/// equal when they name the same 128-bit value, however they were written.
///
/// Immutable, hence its unchecked Sendable conformance (NSObject is not `Sendable`).
public final class CBUUID: NSObject, NSCopying, @unchecked Sendable {
    /// The Bluetooth Base UUID, 0000xxxx-0000-1000-8000-00805F9B34FB.
    private static let base: [UInt8] = [0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5f, 0x9b, 0x34, 0xfb]

    /// The 16 bytes of the full UUID, big-endian.
    let bytes: [UInt8]

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        super.init()
    }

    /// A UUID from its text: 4 or 8 hex digits (optionally `0x`), or the
    /// 128-bit form. Like Core Bluetooth, which raises an exception, it
    /// stops the program on text that is no UUID: use
    /// `init?(validating:)` for text from outside.
    public convenience init(string theString: String) {
        guard let bytes = Self.parse(theString) else {
            preconditionFailure("CBUUID(string:): '\(theString)' is not a Bluetooth UUID")
        }
        self.init(bytes: bytes)
    }

    /// A UUID from text, or nil if the text is no UUID.
    public convenience init?(validating text: String) {
        guard let bytes = Self.parse(text) else { return nil }
        self.init(bytes: bytes)
    }

    /// A UUID from 2, 4 or 16 bytes (big-endian), as Core Bluetooth takes them.
    public convenience init(data theData: Data) {
        guard [2, 4, 16].contains(theData.count) else {
            preconditionFailure("CBUUID(data:): a UUID has 2, 4 or 16 bytes, not \(theData.count)")
        }
        self.init(bytes: theData.count == 16 ? Array(theData) : Self.widened(Array(theData)))
    }

    public convenience init(nsuuid theUUID: UUID) {
        let u = theUUID.uuid
        self.init(bytes: [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15])
    }

    private static func widened(_ short: [UInt8]) -> [UInt8] {
        var bytes = base
        bytes.replaceSubrange((4 - short.count)..<4, with: short)
        return bytes
    }

    private static func parse(_ text: String) -> [UInt8]? {
        var hex = text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : text
        if hex.count == 36 {
            let dashes = [8, 13, 18, 23].map { hex.index(hex.startIndex, offsetBy: $0) }
            guard dashes.allSatisfy({ hex[$0] == "-" }) else { return nil }
            hex.removeAll { $0 == "-" }
        }
        guard [4, 8, 32].contains(hex.count), let data = Hex.decode(hex) else { return nil }
        return hex.count == 32 ? Array(data) : widened(Array(data))
    }

    private var isBaseDerived: Bool { Array(bytes[4...]) == Array(Self.base[4...]) }

    /// The UUID as Core Bluetooth prints it: `180D` for a 16-bit UUID,
    /// `0000FEED` style for 32 bits, else the uppercase 128-bit form.
    public var uuidString: String {
        let hex = Hex.encode(Data(bytes)).uppercased()
        guard isBaseDerived else {
            let h = Array(hex)
            return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
        }
        return bytes[0] == 0 && bytes[1] == 0 ? String(hex.dropFirst(4).prefix(4)) : String(hex.prefix(8))
    }

    /// The UUID's bytes: 2 for a 16-bit UUID, 4 for 32 bits, else 16.
    public var data: Data {
        guard isBaseDerived else { return Data(bytes) }
        return bytes[0] == 0 && bytes[1] == 0 ? Data(bytes[2..<4]) : Data(bytes[0..<4])
    }

    /// The canonical form the gateway uses: lowercase, 128 bits.
    public var gatewayString: String {
        let hex = Hex.encode(Data(bytes))
        let h = Array(hex)
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
    }

    public override var description: String { uuidString }
    public override var hash: Int { bytes.hashValue }
    public override func isEqual(_ object: Any?) -> Bool { (object as? CBUUID)?.bytes == bytes }
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

public let CBUUIDCharacteristicExtendedPropertiesString = "2900"
public let CBUUIDCharacteristicUserDescriptionString = "2901"
public let CBUUIDClientCharacteristicConfigurationString = "2902"
public let CBUUIDServerCharacteristicConfigurationString = "2903"
public let CBUUIDCharacteristicFormatString = "2904"
public let CBUUIDCharacteristicAggregateFormatString = "2905"
