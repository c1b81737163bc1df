/// Google's Eddystone frames, in the service data of UUID 0xFEAA
/// (github.com/google/eddystone, protocol-specification.md): the first byte
/// is the frame type, 0x00 UID, 0x10 URL, 0x20 TLM.
enum Eddystone {
    static let serviceUUID = BluetoothUUID(uuid16: 0xFEAA)

    /// UID: the signed TX power at 0 m, a 10-byte namespace and a 6-byte
    /// instance (two reserved bytes may follow).
    static func uid(_ bytes: [UInt8]) -> [DecodedAdvertisement.Field]? {
        guard bytes.first == 0x00, bytes.count == 18 || bytes.count == 20 else { return nil }
        var reader = ByteReader(Array(bytes.dropFirst()))
        guard let power = reader.signed(1), let namespace = reader.take(10), let instance = reader.take(6) else {
            return nil
        }
        return [
            .init("tx_power", .integer(Int(power))),
            .init("namespace", .text(hex(namespace))),
            .init("instance", .text(hex(instance))),
        ]
    }

    /// URL: the signed TX power at 0 m, a scheme byte and the URL, whose
    /// bytes 0x00 to 0x0D stand for common endings (`.com/`, ...).
    static func url(_ bytes: [UInt8]) -> [DecodedAdvertisement.Field]? {
        guard bytes.first == 0x10, (4...20).contains(bytes.count) else { return nil }
        var reader = ByteReader(Array(bytes.dropFirst()))
        guard let power = reader.signed(1), let scheme = reader.take(1)?.first, Int(scheme) < schemes.count,
            let body = reader.take(reader.remaining)
        else { return nil }
        var url = schemes[Int(scheme)]
        for byte in body {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                return nil
            }
        }
        return [.init("tx_power", .integer(Int(power))), .init("url", .text(url))]
    }

    /// TLM, unencrypted (version 0): battery voltage in mV (0: not
    /// supported), temperature in 8.8 fixed point °C (0x8000: not
    /// supported), advertisements sent and time since power-on in 0.1 s,
    /// all big-endian. Encrypted TLM (version 1) is not decoded.
    static func tlm(_ bytes: [UInt8]) -> [DecodedAdvertisement.Field]? {
        guard bytes.count == 14, bytes[0] == 0x20, bytes[1] == 0x00 else { return nil }
        var reader = ByteReader(Array(bytes.dropFirst(2)))
        guard let battery = reader.unsigned(2, bigEndian: true), let temperature = reader.signed(2, bigEndian: true),
            let count = reader.unsigned(4, bigEndian: true), let tenths = reader.unsigned(4, bigEndian: true)
        else { return nil }
        var fields: [DecodedAdvertisement.Field] = [.init("version", .integer(0))]
        if battery != 0 { fields.append(.init("battery_mv", .integer(Int(battery)))) }
        if temperature != -0x8000 { fields.append(.init("temperature", .number(Double(temperature) / 256))) }
        fields.append(.init("advertisement_count", .integer(Int(count))))
        fields.append(.init("uptime_s", .number(Double(tenths) / 10)))
        return fields
    }

    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info", ".biz",
        ".gov",
    ]

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.string(UInt128($0), width: 2) }.joined()
    }
}
