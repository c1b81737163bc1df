import BlueZ
import MQTTBridge
import Testing

/// Reading standard characteristic values for Home Assistant.
struct SensorKindTests {
    @Test func heartRateMeasurementInBothFormats() {
        let kind = SensorKind.forCharacteristic("00002A37-0000-1000-8000-00805F9B34FB")
        #expect(kind == .heartRate)
        #expect(SensorKind.heartRate.decode([0x00, 72]) == 72)
        #expect(SensorKind.heartRate.decode([0x16, 0x48, 0x03, 0x01]) == 72)  // UInt8 with RR intervals
        #expect(SensorKind.heartRate.decode([0x01, 0x2C, 0x01]) == 300)  // UInt16
        #expect(SensorKind.heartRate.decode([0x01, 0x2C]) == nil)
        #expect(SensorKind.heartRate.decode([]) == nil)
    }

    @Test func batteryLevelIsOnePercentByte() {
        #expect(SensorKind.forCharacteristic("00002a19-0000-1000-8000-00805f9b34fb") == .battery)
        #expect(SensorKind.battery.decode([57]) == 57)
        #expect(SensorKind.battery.decode([101]) == nil)
        #expect(SensorKind.battery.decode([1, 2]) == nil)
        #expect(SensorKind.forCharacteristic("00002a38-0000-1000-8000-00805f9b34fb") == nil)
    }
}

struct TemperatureAndAdvertisementReadingTests {
    @Test func temperatureMeasurementIsAnIEEE11073Float() {
        #expect(SensorKind.forCharacteristic("00002a1c-0000-1000-8000-00805f9b34fb") == .temperature)
        // 2150 x 10^-2 °C.
        #expect(SensorKind.temperature.decode([0x00, 0x66, 0x08, 0x00, 0xFE]) == 21.5)
        // -50 x 10^-1 °C: a negative mantissa.
        #expect(SensorKind.temperature.decode([0x00, 0xCE, 0xFF, 0xFF, 0xFF]) == -5)
        // 986 x 10^-1 °F is 37 °C.
        #expect(SensorKind.temperature.decode([0x01, 0xDA, 0x03, 0x00, 0xFF]) == 37)
        // NaN, and too short.
        #expect(SensorKind.temperature.decode([0x00, 0xFF, 0xFF, 0x7F, 0x00]) == nil)
        #expect(SensorKind.temperature.decode([0x00, 0x66, 0x08, 0x00]) == nil)
    }

    @Test func bthomeAndTLMFieldsBecomeReadings() {
        let bthome = DecodedAdvertisement(
            format: "bthome", source: .serviceData(BluetoothUUID(uuid16: 0xFCD2)),
            fields: [.init("battery", .integer(97)), .init("temperature", .number(25)), .init("humidity", .number(50.55))])
        let readings = SensorKind.readings(in: [bthome])
        #expect(readings.map(\.0) == [.temperature, .humidity, .battery])
        #expect(readings.map(\.1) == [25, 50.55, 97])
        let tlm = DecodedAdvertisement(
            format: "eddystone-tlm", source: .serviceData(BluetoothUUID(uuid16: 0xFEAA)),
            fields: [.init("battery_mv", .integer(3000)), .init("temperature", .number(22.5))])
        #expect(SensorKind.readings(in: [tlm]).map(\.0) == [.temperature])
    }
}
