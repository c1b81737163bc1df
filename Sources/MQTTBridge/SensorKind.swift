import BlueZ

/// A standard sensor the bridge announces to Home Assistant (MQTT
/// discovery): its name, unit, device class and state class as Home
/// Assistant's sensor platform documents them, and where its readings come
/// from (a characteristic value, or a field of a decoded advertisement).
public enum SensorKind: String, Sendable, CaseIterable {
    case heartRate = "heart_rate"
    case battery
    case temperature
    case humidity
    /// The received signal strength of a device's advertisements.
    case signalStrength = "rssi"

    /// Heart Rate Measurement (2a37), Battery Level (2a19) and Temperature
    /// Measurement (2a1c).
    public static func forCharacteristic(_ uuid: String) -> SensorKind? {
        switch uuid.lowercased() {
        case "00002a37-0000-1000-8000-00805f9b34fb": .heartRate
        case "00002a19-0000-1000-8000-00805f9b34fb": .battery
        case "00002a1c-0000-1000-8000-00805f9b34fb": .temperature
        default: nil
        }
    }

    /// The readings in decoded advertisements: BTHome's `temperature`,
    /// `humidity` and `battery` (%), Eddystone-TLM's `temperature`; the
    /// first frame that has a field wins.
    public static func readings(in decoded: [DecodedAdvertisement]) -> [(SensorKind, Double)] {
        var readings: [(SensorKind, Double)] = []
        for (field, kind) in [("temperature", SensorKind.temperature), ("humidity", .humidity), ("battery", .battery)] {
            for frame in decoded {
                guard let value = frame[field] else { continue }
                switch value {
                case .number(let number): readings.append((kind, number))
                case .integer(let integer): readings.append((kind, Double(integer)))
                default: continue
                }
                break
            }
        }
        return readings
    }

    /// The reading in a characteristic value, nil when it is malformed.
    /// Heart Rate Measurement: a flags byte, then the rate as UInt8, or as
    /// UInt16 little-endian when bit 0 of the flags is set. Battery Level:
    /// one byte, 0 to 100 %. Temperature Measurement: a flags byte (bit 0:
    /// Fahrenheit), then an IEEE 11073 32-bit FLOAT (a 24-bit signed
    /// mantissa and an 8-bit signed exponent of ten, little-endian); in °C.
    public func decode(_ bytes: [UInt8]) -> Double? {
        switch self {
        case .heartRate:
            guard let flags = bytes.first else { return nil }
            if flags & 0x01 == 0 {
                return bytes.count >= 2 ? Double(bytes[1]) : nil
            }
            return bytes.count >= 3 ? Double(UInt16(bytes[1]) | UInt16(bytes[2]) << 8) : nil
        case .battery:
            guard bytes.count == 1, bytes[0] <= 100 else { return nil }
            return Double(bytes[0])
        case .temperature:
            guard bytes.count >= 5 else { return nil }
            let raw = UInt32(bytes[1]) | UInt32(bytes[2]) << 8 | UInt32(bytes[3]) << 16
            // NaN, NRes, +INFINITY, -INFINITY and reserved (0x7FFFFE ... 0x800002).
            guard !(0x7F_FFFE...0x80_0002).contains(raw) else { return nil }
            let mantissa = Int32(bitPattern: raw << 8) >> 8
            let exponent = Int8(bitPattern: bytes[4])
            var value = Double(mantissa)
            for _ in 0..<abs(Int(exponent)) { value = exponent < 0 ? value / 10 : value * 10 }
            let celsius = bytes[0] & 0x01 == 0 ? value : (value - 32) * 5 / 9
            return (celsius * 100).rounded() / 100
        case .humidity, .signalStrength:
            return nil
        }
    }

    var name: String {
        switch self {
        case .heartRate: "Heart rate"
        case .battery: "Battery"
        case .temperature: "Temperature"
        case .humidity: "Humidity"
        case .signalStrength: "Signal strength"
        }
    }

    var unit: String {
        switch self {
        case .heartRate: "bpm"
        case .battery, .humidity: "%"
        case .temperature: "°C"
        case .signalStrength: "dBm"
        }
    }

    /// Home Assistant's sensor device class; heart rate has none.
    var deviceClass: String? {
        switch self {
        case .heartRate: nil
        case .battery: "battery"
        case .temperature: "temperature"
        case .humidity: "humidity"
        case .signalStrength: "signal_strength"
        }
    }

    var icon: String? { self == .heartRate ? "mdi:heart-pulse" : nil }

    /// Signal strength is about the radio link, not what the device measures.
    var isDiagnostic: Bool { self == .signalStrength }
}
