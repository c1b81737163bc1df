import BlueZSimulator
import Foundation
import DBus
import Synchronization
import Testing
import TestSupport

/// The sizes the gateway's benchmarks need: 1,000 advertisers, and
/// notification streams of 20,000 values/s in total. These tests check that
/// every device and every value arrives; the rates they print are figures
/// for the report, not assertions.
///
/// They keep both cores busy for seconds, which would disturb tests of
/// other modules that measure their own CPU use in the same process, so
/// they run only when asked: `BLUEZ_SIM_SCALE=1 swift test --filter ScaleTests`
/// (or `make scale-sim`).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["BLUEZ_SIM_SCALE"] == "1"))
struct ScaleTests {
    static func advertisers(_ count: Int, interval: Double) -> Scenario {
        var scenario = Scenario(devices: [])
        for index in 0..<count {
            let address = DeviceAddress(bytes: [0xC0, 0x00, 0x00, 0x00, UInt8(index >> 8), UInt8(index & 0xff)])
            guard let address else { continue }
            scenario.devices.append(
                Scenario.Device(
                    address: address, name: "Sensor \(index)", rssi: Int16(-40 - index % 50), rssiJitter: 5,
                    advertising: Scenario.Advertising(
                        interval: interval, uuids: [GATTUUID(short: 0x181a)],
                        manufacturerData: [0xffff: [UInt8(index & 0xff), 0]], counter: true)))
        }
        return scenario
    }

    @Test func aThousandAdvertisersAreDiscovered() async throws {
        // Real timing: devices not seen for 30 s are forgotten, as bluetoothd does.
        let harness = try await SimulatorHarness(Self.advertisers(1000, interval: 1.0), timing: 1)
        defer { Task { await harness.close() } }
        let started = ContinuousClock.now
        // DuplicateData: every advertisement of every device is a PropertiesChanged.
        try await harness.startDiscovery(["Transport": .string("le"), "DuplicateData": .boolean(true)])
        try await waitUntil("1,000 devices appear", timeout: .seconds(60)) {
            harness.signals.count { $0.member == "InterfacesAdded" } >= 1000
        }
        let discovered = ContinuousClock.now - started
        let before = harness.signals.count { $0.member == "PropertiesChanged" }
        try await Task.sleep(for: .seconds(2))
        let updates = harness.signals.count { $0.member == "PropertiesChanged" } - before
        try await harness.stopDiscovery()
        print("scale: 1,000 advertisers (1 s interval) discovered in \(discovered); then \(updates / 2) device updates/s")
        #expect(try await harness.managedPaths().count == 1002)
        #expect(updates > 0)
    }

    @Test func notificationStreamsOf20000ValuesPerSecond() async throws {
        // 20 peripherals, each with a 16-bit counter notifying 1,000 times a second.
        var scenario = Self.advertisers(20, interval: 0.02)
        for index in scenario.devices.indices {
            scenario.devices[index].services = [
                Scenario.Service(
                    uuid: GATTUUID(short: 0x181a),
                    characteristics: [
                        Scenario.Characteristic(
                            uuid: GATTUUID(short: 0x2a6e), flags: ["read", "notify"],
                            behaviour: .counter(start: 0, step: 1, size: 4, rate: 1000))
                    ])
            ]
        }
        // Fast connects; discovered devices are kept for the whole test.
        let harness = try await SimulatorHarness(
            scenario, timing: 0.001, options: SimulatorOptions(temporaryTimeout: 1_000_000), recording: false)
        defer { Task { await harness.close() } }
        try await harness.startDiscovery()
        try await waitUntil("20 devices appear") {
            try await harness.managedPaths().filter { $0.rawValue.hasPrefix("/org/bluez/hci0/dev_") }.count == 20
        }
        try await harness.stopDiscovery()
        let devices = try await harness.managedPaths().filter { $0.rawValue.hasPrefix("/org/bluez/hci0/dev_") }
        #expect(devices.count == 20)
        let counter = Counter()
        let stream = try await harness.client.signals(
            matching: MatchRule(sender: "org.bluez", interface: .properties, member: "PropertiesChanged"),
            bufferSize: 1_000_000)
        let consumer = Task {
            for try await message in stream {
                guard let value = message.body.count > 1 ? message.body[1].vardict?["Value"]?.bytes : nil,
                    value.count == 4, let path = message.path
                else { continue }
                let number = UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
                counter.record(path, number)
            }
        }
        defer { consumer.cancel() }
        for device in devices { try await harness.connect(device) }
        let characteristics = devices.map { ObjectPath(unchecked: $0.rawValue + "/service000c/char000d") }
        for path in characteristics { try await harness.call(path, "org.bluez.GattCharacteristic1", "StartNotify") }
        try await Task.sleep(for: .seconds(1))
        let start = (counter.total, ContinuousClock.now, await harness.simulator.statistics.notifications)
        try await Task.sleep(for: .seconds(3))
        let received = counter.total - start.0
        let elapsed = ContinuousClock.now - start.1
        let sent = await harness.simulator.statistics.notifications - start.2
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("scale: 20 streams at 1,000 values/s each: simulator emitted \(Int(Double(sent) / seconds))/s, client received \(Int(Double(received) / seconds))/s; gaps \(counter.gaps)")
        #expect(received > 0)
        // Every stream is in order and complete: no value lost on the way.
        #expect(counter.gaps == 0)
    }
}

/// Counts values per stream and the gaps in each stream's sequence.
final class Counter: Sendable {
    private let state = Mutex<(total: Int, gaps: Int, last: [ObjectPath: UInt32])>((0, 0, [:]))
    func record(_ path: ObjectPath, _ number: UInt32) {
        state.withLock { state in
            state.total += 1
            if let last = state.last[path], number != last &+ 1 { state.gaps += 1 }
            state.last[path] = number
        }
    }
    var total: Int { state.withLock { $0.total } }
    var gaps: Int { state.withLock { $0.gaps } }
}
