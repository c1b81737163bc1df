/// Apple's iBeacon (Proximity Beacon Specification, release R1): the
/// manufacturer data of company 0x004C is `02 15`, a 16-byte proximity
/// UUID, a big-endian major and minor, and the signed RSSI measured at one
/// metre.
enum IBeacon {
    /// The type and length bytes that open the frame.
    static let prefix: [UInt8] = [0x02, 0x15]

    /// Bytes after the 23 of the frame (a sequence number some beacons
    /// append) are ignored.
    static func decode(_ bytes: [UInt8]) -> [DecodedAdvertisement.Field]? {
        guard bytes.count >= 23, Array(bytes.prefix(2)) == prefix else { return nil }
        var reader = ByteReader(Array(bytes.dropFirst(2)))
        guard let uuid = reader.take(16), let major = reader.unsigned(2, bigEndian: true),
            let minor = reader.unsigned(2, bigEndian: true), let power = reader.signed(1)
        else { return nil }
        return [
            .init("uuid", .text(uuidString(uuid))),
            .init("major", .integer(Int(major))),
            .init("minor", .integer(Int(minor))),
            .init("measured_power", .integer(Int(power))),
        ]
    }

    /// `e2c56db5-dffb-48d2-b060-d0f5a71096e0` from 16 bytes in order.
    static func uuidString(_ bytes: [UInt8]) -> String {
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text += "-" }
            text += Hex.string(UInt128(byte), width: 2, uppercase: false)
        }
        return text
    }
}
