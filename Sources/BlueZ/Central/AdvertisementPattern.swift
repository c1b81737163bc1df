/// One pattern of an advertisement monitor (`or_patterns`): an advertising
/// data structure of type `adType` whose data holds `content` at `start`.
/// A passive scan reports the devices whose advertisements match at least
/// one of its patterns (BlueZ's `AdvertisementMonitor1.Patterns`).
public struct AdvertisementPattern: Sendable, Hashable, CustomStringConvertible {
    /// The index in the AD structure's data (after its length and type
    /// bytes) where `content` must appear.
    public var start: UInt8
    /// The AD type (0xff manufacturer data, 0x16 service data, 0x09 the
    /// complete local name, 0x03 a complete list of 16-bit UUIDs, ...).
    public var adType: UInt8
    /// The bytes to match: 1 to 31 of them.
    public var content: [UInt8]

    /// The most an advertising PDU's data holds (legacy advertising).
    public static let maximumLength = 31

    public init(start: UInt8 = 0, adType: UInt8, content: [UInt8]) {
        self.start = start
        self.adType = adType
        self.content = content
    }

    /// `start:type:content` in hex, as the API writes it (`0:ff:ffff`).
    public var description: String {
        "\(start):\(Self.hex([adType])):\(Self.hex(content))"
    }

    /// Reads `start:type:content` (`0:ff:4c00`): start in decimal, the AD
    /// type and the content in hex (the type may be written `0xff`).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let start = UInt8(parts[0]) else { return nil }
        var typeText = Substring(parts[1].lowercased())
        if typeText.hasPrefix("0x") { typeText = typeText.dropFirst(2) }
        guard !typeText.isEmpty, typeText.count <= 2, let adType = UInt8(typeText, radix: 16),
            let content = Self.bytes(fromHex: parts[2])
        else { return nil }
        self.init(start: start, adType: adType, content: content)
    }

    /// Why bluetoothd 5.66 would refuse the pattern (it releases the whole
    /// monitor: seen in the VM rig with a 32-byte content and with AD type
    /// 0; docs/central.md), or nil when it is acceptable. A start that puts
    /// the content past an advertisement's end is left to bluetoothd.
    public var problem: String? {
        if content.isEmpty { return "the pattern \(self) has no content" }
        if content.count > Self.maximumLength {
            return "the pattern \(self) has more than \(Self.maximumLength) bytes"
        }
        // bluetoothd takes the types of the assigned numbers up to 0x3d
        // (3D information data) and manufacturer data (0xff).
        if adType == 0 || (adType > 0x3d && adType != 0xff) {
            return "0x\(String(adType, radix: 16)) is not an advertising data type bluetoothd monitors"
        }
        return nil
    }

    /// Patterns that catch what a discovery filter asks for, where a
    /// pattern can say it exactly: a company's manufacturer data, service
    /// data of a UUID, a name or name prefix (complete and shortened local
    /// name), and a service UUID first in its list. Empty when the filter
    /// names none of these. The session still applies the whole filter.
    public static func derived(from filter: DiscoveryFilter) -> [AdvertisementPattern] {
        var patterns: [AdvertisementPattern] = []
        if let manufacturer = filter.manufacturerID {
            patterns.append(AdvertisementPattern(adType: 0xff, content: [UInt8(manufacturer & 0xff), UInt8(manufacturer >> 8)]))
        }
        for uuid in filter.serviceDataUUIDs {
            if let short = uuid.assignedNumber.flatMap(UInt16.init(exactly:)) {
                patterns.append(AdvertisementPattern(adType: 0x16, content: [UInt8(short & 0xff), UInt8(short >> 8)]))
            } else {
                patterns.append(AdvertisementPattern(adType: 0x21, content: Self.littleEndian(uuid)))
            }
        }
        for uuid in filter.serviceUUIDs {
            if let short = uuid.assignedNumber.flatMap(UInt16.init(exactly:)) {
                let bytes = [UInt8(short & 0xff), UInt8(short >> 8)]
                patterns.append(AdvertisementPattern(adType: 0x02, content: bytes))
                patterns.append(AdvertisementPattern(adType: 0x03, content: bytes))
            } else {
                patterns.append(AdvertisementPattern(adType: 0x06, content: Self.littleEndian(uuid)))
                patterns.append(AdvertisementPattern(adType: 0x07, content: Self.littleEndian(uuid)))
            }
        }
        if let name = filter.name ?? filter.namePrefix, !name.isEmpty {
            let bytes = Array(name.utf8.prefix(maximumLength))
            patterns.append(AdvertisementPattern(adType: 0x09, content: bytes))
            patterns.append(AdvertisementPattern(adType: 0x08, content: bytes))
        }
        return patterns
    }
}

extension AdvertisementPattern {
    static func hex(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.flatMap { [Hex.digit($0 >> 4), Hex.digit($0)] }, as: UTF8.self)
    }

    static func bytes(fromHex text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Hex.value(of: digits[index]), let low = Hex.value(of: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// A 128-bit UUID as advertising data carries it: least significant byte first.
    static func littleEndian(_ uuid: BluetoothUUID) -> [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: uuid.rawValue >> (8 * $0)) }
    }
}
