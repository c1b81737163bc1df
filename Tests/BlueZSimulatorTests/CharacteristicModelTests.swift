@testable import BlueZSimulator
import Testing

@Suite struct CharacteristicModelTests {
    func model(_ flags: [String], _ behaviour: Scenario.Behaviour, value: [UInt8] = []) -> CharacteristicModel {
        CharacteristicModel(
            Scenario.Characteristic(uuid: GATTUUID(short: 0x2a00), flags: flags, value: value, behaviour: behaviour))
    }

    @Test func readsHonourFlagsAndOffsets() throws {
        var constant = model(["read"], .constant, value: [1, 2, 3])
        #expect(try constant.read(offset: 0).get() == [1, 2, 3])
        #expect(try constant.read(offset: 2).get() == [3])
        #expect(try constant.read(offset: 3).get() == [])
        #expect(throws: ATTFailure.self) { try constant.read(offset: 4).get() }
        var writeOnly = model(["write"], .constant)
        #expect(throws: ATTFailure.self) { try writeOnly.read(offset: 0).get() }
        if case .failure(let failure) = writeOnly.read(offset: 0) { #expect(failure.code == ATTError.readNotPermitted) }
    }

    @Test func aCounterCountsTicksOrReads() throws {
        var ticking = model(["read", "notify"], .counter(start: 0xfe, step: 1, size: 2, rate: 10))
        #expect(ticking.period == 0.1)
        var random = SplitMix64(seed: 1)
        #expect(ticking.tick(random: &random) == [0xff, 0x00])
        #expect(ticking.tick(random: &random) == [0x00, 0x01])
        var reading = model(["read"], .counter(start: 7, step: 2, size: 1, rate: 0))
        #expect(reading.period == nil)
        #expect(try reading.read(offset: 0).get() == [7])
        #expect(try reading.read(offset: 0).get() == [9])
    }

    @Test func aBatteryDrainsToItsMinimum() {
        var battery = model(["read", "notify"], .battery(level: 3, drain: 2, every: 5, minimum: 0))
        var random = SplitMix64(seed: 1)
        #expect(battery.value == [3])
        #expect(battery.tick(random: &random) == [1])
        #expect(battery.tick(random: &random) == [0])
        #expect(battery.tick(random: &random) == nil)
    }

    @Test func echoAndControlPointAnswerWrites() throws {
        var echo = model(["read", "write"], .echo, value: [0])
        #expect(echo.write([1, 2], offset: 0) == nil)
        #expect(echo.write([9], offset: 1) == nil)
        #expect(try echo.read(offset: 0).get() == [1, 9])
        #expect(echo.write([5], offset: 9) == ATTError.invalidOffset)
        var point = model(["write"], .controlPoint(accept: [[1]], error: 0x80))
        #expect(point.write([1], offset: 0) == nil)
        #expect(point.write([2], offset: 0) == 0x80)
        var failing = model(["read", "write"], .failing(error: 0x0e))
        #expect(failing.write([1], offset: 0) == 0x0e)
    }

    @Test func heartRateAndTemperatureUseTheirFormats() {
        var random = SplitMix64(seed: 42)
        var strap = model(["notify"], .heartRate(bpm: 70, variation: 5, rate: 1))
        for _ in 0..<50 {
            let value = strap.tick(random: &random) ?? []
            #expect(value.count == 2 && value[0] == 0x06 && (65...75).contains(value[1]))
        }
        // 21.5 °C: mantissa 2150 (0x000866), exponent -2 (0xfe).
        #expect(CharacteristicModel.temperature(21.5) == [0x00, 0x66, 0x08, 0x00, 0xfe])
    }

    @Test func theAttributeTableHasBlueZsPaths() {
        let database = GATTDatabase(
            [GATTDatabase.genericAttribute]
                + [Scenario.Service(uuid: GATTUUID(short: 0x180d), characteristics: [
                    Scenario.Characteristic(uuid: GATTUUID(short: 0x2a37), flags: ["notify"]),
                    Scenario.Characteristic(uuid: GATTUUID(short: 0x2a38), flags: ["read"]),
                ])], firstHandle: 0x0008)
        #expect(database.services.map(\.component) == ["service0008", "service000c"])
        #expect(database.characteristics.map(\.component) == ["char0009", "char000d", "char0010"])
        #expect(database.characteristics[1].descriptors.map(\.component) == ["desc000f"])
        #expect(database.characteristics[1].descriptors.first?.isClientConfiguration == true)
    }
}
