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
