import BlueZSimulator
import Testing
@testable import DBus

@Suite struct GATTTests {
    let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let strap = TestScenarios.heartRatePath
    let measurement = ObjectPath(unchecked: strap + "/service000c/char000d")
    let location = ObjectPath(unchecked: strap + "/service000c/char0010")
    let controlPoint = ObjectPath(unchecked: strap + "/service000c/char0012")

    func connected(_ scenario: Scenario = TestScenarios.small) async throws -> SimulatorHarness {
        let harness = try await SimulatorHarness(scenario)
        try await harness.connect(try ObjectPath(Self.strap))
        return harness
    }

    func error(_ name: String, _ message: String) -> DBusError {
        DBusError(ErrorName(unchecked: "org.bluez.Error." + name), message)
    }

    @Test func readsReturnTheValueAndUpdateTheProperty() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        let value = try await harness.call(location, characteristic, "ReadValue", [.vardict([:])])
        #expect(value.first?.bytes == [0x01])
        #expect(try await harness.property(location, "org.bluez.GattCharacteristic1", "Value")?.bytes == [0x01])
        let tail = try await harness.call(location, characteristic, "ReadValue", [.vardict(["offset": .uint16(1)])])
        #expect(tail.first?.bytes == [])
        #expect(try await harness.property(location, "org.bluez.GattCharacteristic1", "MTU")?.uint16 == 517)
        #expect(try await harness.property(location, "org.bluez.GattCharacteristic1", "Flags")?.strings == ["read"])
    }

    @Test func gattErrorsAreBluetoothds() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        let empty = Value.vardict([:])
        #expect(await harness.error(controlPoint, characteristic, "ReadValue", [empty]) == error("NotPermitted", "Read not permitted"))
        #expect(
            await harness.error(location, characteristic, "ReadValue", [.vardict(["offset": .uint16(5)])])
                == error("InvalidArguments", "Invalid offset"))
        #expect(
            await harness.error(location, characteristic, "ReadValue", [.vardict(["offset": .uint32(0)])])
                == error("InvalidArguments", "Invalid arguments in method call"))
        #expect(await harness.error(location, characteristic, "ReadValue", [.vardict(["unknown": .uint16(0)])]) == nil)
        #expect(
            await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([0x02]), empty])
                == error("Failed", "Operation failed with ATT error: 0x80"))
        #expect(await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([0x01]), empty]) == nil)
        #expect(
            await harness.error(location, characteristic, "WriteValue", [.bytes([0x01]), empty])
                == error("NotSupported", "Operation is not supported"))
        #expect(
            await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([1]), .vardict(["type": .string("bogus")])])
                == error("NotSupported", "Operation is not supported"))
        // A command goes out whatever the flags; the peripheral's answer is never seen.
        #expect(
            await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([9]), .vardict(["type": .string("command")])])
                == nil)
        #expect(await harness.error(location, characteristic, "StartNotify") == error("NotSupported", "Operation is not supported"))
        #expect(await harness.error(measurement, characteristic, "StopNotify") == error("Failed", "No notify session started"))
    }

    @Test func notificationsFlowWhileNotifying() async throws {
        var scenario = TestScenarios.small
        scenario.devices[0].services[0].characteristics[0].behaviour = .heartRate(bpm: 72, variation: 6, rate: 50)
        let harness = try await connected(scenario)
        defer { Task { await harness.close() } }
        try await harness.call(measurement, characteristic, "StartNotify")
        try await waitUntil("ten values arrive") {
            harness.signals.changes(at: measurement, "org.bluez.GattCharacteristic1").filter { $0.changed["Value"] != nil }.count >= 10
        }
        let values = harness.signals.changes(at: measurement, "org.bluez.GattCharacteristic1").compactMap { $0.changed["Value"]?.bytes }
        #expect(values.allSatisfy { $0.count == 2 && $0[0] == 0x06 && (66...78).contains($0[1]) })
        #expect(harness.signals.changes(at: measurement, "org.bluez.GattCharacteristic1").first?.changed["Notifying"]?.bool == true)
        try await harness.call(measurement, characteristic, "StopNotify")
        #expect(try await harness.property(measurement, "org.bluez.GattCharacteristic1", "Notifying")?.bool == false)
        try await Task.sleep(for: .milliseconds(100))
        let count = harness.signals.changes(at: measurement, "org.bluez.GattCharacteristic1").count
        try await Task.sleep(for: .milliseconds(200))
        #expect(harness.signals.changes(at: measurement, "org.bluez.GattCharacteristic1").count == count)
    }

    @Test func aSecondStartNotifyIsInProgressOnlyWhileTheFirstIsPending() async throws {
        // Real timing (a 50 ms CCC write), instant connections.
        var scenario = TestScenarios.small
        scenario.devices[0].connection = Scenario.Connection(delay: 0, resolveDelay: 0)
        let harness = try await SimulatorHarness(scenario, timing: 1)
        defer { Task { await harness.close() } }
        try await harness.connect(try ObjectPath(Self.strap))
        // Sent back to back, in order: the second reaches the simulator
        // while the first's CCC write is pending, however busy the machine.
        let startNotify = Message.methodCall(
            destination: "org.bluez", path: measurement, interface: characteristic, member: "StartNotify")
        let replies = await harness.client.callsInOrder([startNotify, startNotify])
        #expect(throws: Never.self) { try replies[0].get() }
        #expect(throws: error("InProgress", "In Progress")) { try replies[1].get() }
        #expect(await harness.error(measurement, characteristic, "StartNotify") == nil)
    }

    @Test func anEchoReadsBackAndNotifiesWhatWasWritten() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let plug = try ObjectPath(TestScenarios.plugPath)
        try await harness.connect(plug)
        let relay = try ObjectPath(TestScenarios.plugPath + "/service000c/char000d")
        try await harness.call(relay, characteristic, "StartNotify")
        try await harness.call(relay, characteristic, "WriteValue", [.bytes([0x01]), .vardict([:])])
        #expect(try await harness.call(relay, characteristic, "ReadValue", [.vardict([:])]).first?.bytes == [0x01])
        try await waitUntil("the write is notified") {
            harness.signals.changes(at: relay, "org.bluez.GattCharacteristic1").contains { $0.changed["Value"]?.bytes == [0x01] }
        }
        let label = try ObjectPath(TestScenarios.plugPath + "/service000c/char000d/desc0010")
        let text = try await harness.call(label, "org.bluez.GattDescriptor1", "ReadValue", [.vardict([:])])
        #expect(text.first?.bytes == Array("Relay".utf8))
    }

    @Test func anEncryptedCharacteristicPairsOrRefuses() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let plug = try ObjectPath(TestScenarios.plugPath)
        try await harness.connect(plug)
        let schedule = try ObjectPath(TestScenarios.plugPath + "/service000c/char0014")
        // Just Works: bluetoothd raises the security level, pairs, retries.
        #expect(try await harness.call(schedule, characteristic, "ReadValue", [.vardict([:])]).first?.bytes == [0, 0])
        #expect(try await harness.property(plug, "org.bluez.Device1", "Paired")?.bool == true)

        var scenario = TestScenarios.small
        scenario.devices[2].pairing.accept = false
        let refusing = try await SimulatorHarness(scenario)
        defer { Task { await refusing.close() } }
        try await refusing.connect(plug)
        #expect(
            await refusing.error(schedule, characteristic, "ReadValue", [.vardict([:])]) == error("NotPermitted", "Not paired"))
    }

    @Test func valuesPushedFromTheControlAPIAreNotified() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        let battery = try ObjectPath(Self.strap + "/service0014/char0015")
        try await harness.call(battery, characteristic, "StartNotify")
        try await harness.simulator.setValue([42], characteristic: GATTUUID(short: 0x2a19), of: TestScenarios.address(TestScenarios.heartRate))
        try await waitUntil("the value is notified") {
            harness.signals.changes(at: battery, "org.bluez.GattCharacteristic1").contains { $0.changed["Value"]?.bytes == [42] }
        }
        #expect(try await harness.property(try ObjectPath(Self.strap), "org.bluez.Battery1", "Percentage")?.byte == 42)
    }
}
