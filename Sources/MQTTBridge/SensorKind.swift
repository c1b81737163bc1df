/// A standard sensor the bridge announces to Home Assistant (MQTT
/// discovery): its name, unit and device class, and how its value is read
/// from a characteristic where one defines it.
public enum SensorKind: String, Sendable, CaseIterable {
    case heartRate = "heart_rate"
    case battery
    case temperature
    case humidity

    /// The Heart Rate Measurement (2a37) and Battery Level (2a19)
    /// characteristics; temperature and humidity come from decoded
    /// advertisements (`Bridge.publishSensorReading`).
    public static func forCharacteristic(_ uuid: String) -> SensorKind? {
        switch uuid.lowercased() {
        case "00002a37-0000-1000-8000-00805f9b34fb": .heartRate
        case "00002a19-0000-1000-8000-00805f9b34fb": .battery
        default: nil
        }
    }

    /// The reading in a characteristic value, nil when it is malformed.
    /// Heart Rate Measurement: a flags byte, then the rate as UInt8, or as
    /// UInt16 little-endian when bit 0 of the flags is set. Battery Level:
    /// one byte, 0 to 100 %.
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
        case .temperature, .humidity:
            return nil
        }
    }

    var name: String {
        switch self {
        case .heartRate: "Heart rate"
        case .battery: "Battery"
        case .temperature: "Temperature"
        case .humidity: "Humidity"
        }
    }

    var unit: String {
        switch self {
        case .heartRate: "bpm"
        case .battery, .humidity: "%"
        case .temperature: "°C"
        }
    }

    /// Home Assistant's device class; heart rate has none.
    var deviceClass: String? {
        switch self {
        case .heartRate: nil
        case .battery: "battery"
        case .temperature: "temperature"
        case .humidity: "humidity"
        }
    }

    var icon: String? { self == .heartRate ? "mdi:heart-pulse" : nil }
}
