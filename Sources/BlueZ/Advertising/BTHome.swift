/// BTHome v2 (bthome.io/format), in the service data of UUID 0xFCD2: a
/// device information byte (bit 0 encrypted, bit 2 trigger based, bits 5-7
/// the version, 2) and then objects, each an id byte and a little-endian
/// value whose size and scale the id fixes.
enum BTHome {
    static let serviceUUID = BluetoothUUID(uuid16: 0xFCD2)

    /// How one object id is read.
    struct Object {
        let name: String
        /// Bytes of the value; 0 for a length-prefixed value (text, raw).
        let size: Int
        let signed: Bool
        /// The factor of a measurement, nil for a plain integer.
        let factor: Double?
        /// A binary sensor (0 off, 1 on).
        let binary: Bool

        static func measurement(_ name: String, _ size: Int, signed: Bool = false, factor: Double? = nil) -> Object {
            Object(name: name, size: size, signed: signed, factor: factor, binary: false)
        }

        static func binary(_ name: String) -> Object {
            Object(name: name, size: 1, signed: false, factor: nil, binary: true)
        }
    }

    /// Object ids of the BTHome v2 format table (sensor data, binary sensor
    /// data, events and device information). An id not listed stops the
    /// decoding: its size is unknown, so nothing after it can be read.
    static let objects: [UInt8: Object] = [
        0x00: .measurement("packet_id", 1),
        0x01: .measurement("battery", 1),
        0x02: .measurement("temperature", 2, signed: true, factor: 0.01),
        0x03: .measurement("humidity", 2, factor: 0.01),
        0x04: .measurement("pressure", 3, factor: 0.01),
        0x05: .measurement("illuminance", 3, factor: 0.01),
        0x06: .measurement("mass_kg", 2, factor: 0.01),
        0x07: .measurement("mass_lb", 2, factor: 0.01),
        0x08: .measurement("dewpoint", 2, signed: true, factor: 0.01),
        0x09: .measurement("count", 1),
        0x0A: .measurement("energy", 3, factor: 0.001),
        0x0B: .measurement("power", 3, factor: 0.01),
        0x0C: .measurement("voltage", 2, factor: 0.001),
        0x0D: .measurement("pm2_5", 2),
        0x0E: .measurement("pm10", 2),
        0x0F: .binary("generic_boolean"),
        0x10: .binary("power_on"),
        0x11: .binary("opening"),
        0x12: .measurement("co2", 2),
        0x13: .measurement("tvoc", 2),
        0x14: .measurement("moisture", 2, factor: 0.01),
        0x15: .binary("battery_low"),
        0x16: .binary("battery_charging"),
        0x17: .binary("carbon_monoxide"),
        0x18: .binary("cold"),
        0x19: .binary("connectivity"),
        0x1A: .binary("door"),
        0x1B: .binary("garage_door"),
        0x1C: .binary("gas_detected"),
        0x1D: .binary("heat"),
        0x1E: .binary("light"),
        0x1F: .binary("lock"),
        0x20: .binary("moisture_detected"),
        0x21: .binary("motion"),
        0x22: .binary("moving"),
        0x23: .binary("occupancy"),
        0x24: .binary("plug"),
        0x25: .binary("presence"),
        0x26: .binary("problem"),
        0x27: .binary("running"),
        0x28: .binary("safety"),
        0x29: .binary("smoke"),
        0x2A: .binary("sound"),
        0x2B: .binary("tamper"),
        0x2C: .binary("vibration"),
        0x2D: .binary("window"),
        0x2E: .measurement("humidity", 1),
        0x2F: .measurement("moisture", 1),
        0x3A: .measurement("button", 1),
        0x3C: .measurement("dimmer", 2),
        0x3D: .measurement("count", 2),
        0x3E: .measurement("count", 4),
        0x3F: .measurement("rotation", 2, signed: true, factor: 0.1),
        0x40: .measurement("distance_mm", 2),
        0x41: .measurement("distance_m", 2, factor: 0.1),
        0x42: .measurement("duration", 3, factor: 0.001),
        0x43: .measurement("current", 2, factor: 0.001),
        0x44: .measurement("speed", 2, factor: 0.01),
        0x45: .measurement("temperature", 2, signed: true, factor: 0.1),
        0x46: .measurement("uv_index", 1, factor: 0.1),
        0x47: .measurement("volume_l", 2, factor: 0.1),
        0x48: .measurement("volume_ml", 2),
        0x49: .measurement("volume_flow_rate", 2, factor: 0.001),
        0x4A: .measurement("voltage", 2, factor: 0.1),
        0x4B: .measurement("gas", 3, factor: 0.001),
        0x4C: .measurement("gas", 4, factor: 0.001),
        0x4D: .measurement("energy", 4, factor: 0.001),
        0x4E: .measurement("volume_l", 4, factor: 0.001),
        0x4F: .measurement("water", 4, factor: 0.001),
        0x50: .measurement("timestamp", 4),
        0x51: .measurement("acceleration", 2, factor: 0.001),
        0x52: .measurement("gyroscope", 2, factor: 0.001),
        0x53: .measurement("text", 0),
        0x54: .measurement("raw", 0),
        0x55: .measurement("volume_storage", 4, factor: 0.001),
        0x56: .measurement("conductivity", 2),
        0x57: .measurement("temperature", 1, signed: true),
        0x58: .measurement("temperature", 1, signed: true, factor: 0.35),
        0x59: .measurement("count", 1, signed: true),
        0x5A: .measurement("count", 2, signed: true),
        0x5B: .measurement("count", 4, signed: true),
        0x5C: .measurement("power", 4, signed: true, factor: 0.01),
        0x5D: .measurement("current", 2, signed: true, factor: 0.001),
        0xF0: .measurement("device_type_id", 2),
        0xF1: .measurement("firmware_version", 4),
        0xF2: .measurement("firmware_version", 3),
    ]

    static func decode(_ bytes: [UInt8]) -> [DecodedAdvertisement.Field]? {
        guard let info = bytes.first, info >> 5 == 2 else { return nil }
        var fields: [DecodedAdvertisement.Field] = [
            .init("version", .integer(2)), .init("encrypted", .flag(info & 0x01 != 0)),
            .init("trigger_based", .flag(info & 0x04 != 0)),
        ]
        // Encrypted objects need the device's key, which the gateway does
        // not have.
        guard info & 0x01 == 0 else { return fields }
        var reader = ByteReader(Array(bytes.dropFirst()))
        var seen: [String: Int] = [:]
        while reader.remaining > 0 {
            guard let id = reader.take(1)?.first, let object = objects[id], let value = read(object, from: &reader)
            else {
                // An unknown id or a truncated value: what follows cannot be read.
                fields.append(.init("undecoded", .bytes(Array(bytes.suffix(reader.remaining + 1)))))
                break
            }
            seen[object.name, default: 0] += 1
            let count = seen[object.name] ?? 1
            fields.append(.init(count == 1 ? object.name : "\(object.name)_\(count)", value))
        }
        return fields
    }

    private static func read(_ object: Object, from reader: inout ByteReader) -> DecodedAdvertisement.Value? {
        if object.size == 0 {
            guard let length = reader.take(1)?.first, let body = reader.take(Int(length)) else { return nil }
            if object.name == "text" { return .text(String(decoding: body, as: UTF8.self)) }
            return .bytes(body)
        }
        if object.binary {
            guard let value = reader.unsigned(1) else { return nil }
            return .flag(value != 0)
        }
        let raw: Int64?
        if object.signed {
            raw = reader.signed(object.size)
        } else {
            raw = reader.unsigned(object.size).map { Int64($0) }
        }
        guard let raw else { return nil }
        guard let factor = object.factor else { return .integer(Int(raw)) }
        // Rounded to the factor's decimals, so 2500 × 0.01 is 25.0, not 25.000000000000004.
        var decimals = 1.0
        while abs(factor * decimals - (factor * decimals).rounded()) > 1e-9, decimals < 1e6 { decimals *= 10 }
        return .number((Double(raw) * factor * decimals).rounded() / decimals)
    }
}
