/// One entry of the decoder table: the payload it reads (manufacturer data
/// of a company, or service data of a UUID) and how it reads it.
///
/// Adding a format is adding an entry to `AdvertisementDecoder.table`: a
/// key and a function from the payload's bytes to a result, nil when the
/// bytes are not that format (several entries may share a key; the first
/// that decodes wins).
public struct AdvertisementDecoder: Sendable {
    /// Where a payload sits in the advertisement.
    public enum Key: Sendable, Hashable {
        /// `ManufacturerData` of this company identifier.
        case manufacturer(CompanyIdentifier)
        /// `ServiceData` of this service UUID.
        case serviceData(BluetoothUUID)
    }

    public let key: Key
    /// The format it decodes, for documentation and listings.
    public let format: String
    let decode: @Sendable ([UInt8]) -> [DecodedAdvertisement.Field]?

    public init(
        _ key: Key, format: String, decode: @escaping @Sendable ([UInt8]) -> [DecodedAdvertisement.Field]?
    ) {
        self.key = key
        self.format = format
        self.decode = decode
    }

    /// The decoders the gateway knows.
    public static let table: [AdvertisementDecoder] = [
        AdvertisementDecoder(.manufacturer(CompanyIdentifier(0x004C)), format: "ibeacon", decode: IBeacon.decode),
        AdvertisementDecoder(.serviceData(Eddystone.serviceUUID), format: "eddystone-uid", decode: Eddystone.uid),
        AdvertisementDecoder(.serviceData(Eddystone.serviceUUID), format: "eddystone-url", decode: Eddystone.url),
        AdvertisementDecoder(.serviceData(Eddystone.serviceUUID), format: "eddystone-tlm", decode: Eddystone.tlm),
        AdvertisementDecoder(.serviceData(BTHome.serviceUUID), format: "bthome", decode: BTHome.decode),
    ]

    /// The table by key, in table order within a key.
    static let byKey: [Key: [AdvertisementDecoder]] = Dictionary(grouping: table, by: \.key)

    /// Decodes `bytes` found at `key` with the first entry that reads them.
    public static func decode(_ bytes: [UInt8], at key: Key) -> DecodedAdvertisement? {
        for decoder in byKey[key] ?? [] {
            if let fields = decoder.decode(bytes) {
                return DecodedAdvertisement(format: decoder.format, source: key, fields: fields)
            }
        }
        return nil
    }
}

extension AdvertisementData {
    /// The payloads of this advertisement that a decoder of
    /// `AdvertisementDecoder.table` reads: manufacturer data by company,
    /// then service data by UUID.
    public var decoded: [DecodedAdvertisement] {
        var results: [DecodedAdvertisement] = []
        for company in manufacturerData.keys.sorted() {
            guard let bytes = manufacturerData[company] else { continue }
            if let result = AdvertisementDecoder.decode(bytes, at: .manufacturer(company)) { results.append(result) }
        }
        for uuid in serviceData.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let bytes = serviceData[uuid] else { continue }
            if let result = AdvertisementDecoder.decode(bytes, at: .serviceData(uuid)) { results.append(result) }
        }
        return results
    }
}
