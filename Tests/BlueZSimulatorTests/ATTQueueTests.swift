import BlueZSimulator
import DBus
import Testing

/// Concurrent GATT calls meet as they do in bluetoothd 5.66: reads of one
/// value merged, a second read at another offset or a second write refused
/// with InProgress, different attributes in flight together. The
/// peripheral's answers are held back so that calls meet deterministically.
@Suite struct ATTQueueTests {
    let characteristic: InterfaceName = "org.bluez.GattCharacteristic1"
    static let strap = TestScenarios.heartRatePath
    let location = ObjectPath(unchecked: strap + "/service000c/char0010")
    let controlPoint = ObjectPath(unchecked: strap + "/service000c/char0012")
    let address = TestScenarios.address(TestScenarios.heartRate)
    let inProgress = DBusError(ErrorName(unchecked: "org.bluez.Error.InProgress"), "In Progress")

    func connected() async throws -> SimulatorHarness {
        let harness = try await SimulatorHarness(TestScenarios.small)
        try await harness.connect(try ObjectPath(Self.strap))
        return harness
    }

    func held(_ harness: SimulatorHarness, _ count: Int) async throws {
        let address = address
        try await waitUntil("\(count) ATT requests wait for the peripheral") {
            try await harness.simulator.heldGATTRequests(of: address) == count
        }
    }

    @Test func concurrentReadsAtOneOffsetShareOnePeripheralRead() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        let before = await harness.simulator.statistics
        try await harness.simulator.holdGATT(true, of: address)
        let location = location, characteristic = characteristic
        let reads = (0..<5).map { _ in
            Task { try await harness.call(location, characteristic, "ReadValue", [.vardict([:])]).first?.bytes }
        }
        try await waitUntil("the five calls arrive") {
            await harness.simulator.statistics.readValueCalls - before.readValueCalls == 5
        }
        try await held(harness, 1)
        try await harness.simulator.holdGATT(false, of: address)
        for read in reads { #expect(try await read.value == [0x01]) }
        let after = await harness.simulator.statistics
        #expect(after.peripheralReads - before.peripheralReads == 1)
        #expect(after.inProgressReplies == before.inProgressReplies)
    }

    @Test func aReadAtAnotherOffsetOrASecondWriteIsInProgress() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        try await harness.simulator.holdGATT(true, of: address)
        let location = location, controlPoint = controlPoint, characteristic = characteristic
        let read = Task { try await harness.call(location, characteristic, "ReadValue", [.vardict([:])]).first?.bytes }
        let write = Task { try await harness.call(controlPoint, characteristic, "WriteValue", [.bytes([0x01]), .vardict([:])]) }
        try await held(harness, 2)
        #expect(await harness.error(location, characteristic, "ReadValue", [.vardict(["offset": .uint16(1)])]) == inProgress)
        #expect(await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([0x01]), .vardict([:])]) == inProgress)
        // Refused before its type is looked at: a command too.
        #expect(
            await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([0x01]), .vardict(["type": .string("command")])])
                == inProgress)
        try await harness.simulator.holdGATT(false, of: address)
        #expect(try await read.value == [0x01])
        _ = try await write.value
        #expect(await harness.simulator.statistics.inProgressReplies == 3)
        // Nothing in flight any more.
        #expect(await harness.error(controlPoint, characteristic, "WriteValue", [.bytes([0x01]), .vardict([:])]) == nil)
    }

    @Test func descriptorReadsAreMergedLikeCharacteristicReads() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        let descriptor: InterfaceName = "org.bluez.GattDescriptor1"
        let configuration = ObjectPath(unchecked: Self.strap + "/service000c/char000d/desc000f")
        let before = await harness.simulator.statistics
        try await harness.simulator.holdGATT(true, of: address)
        let reads = (0..<3).map { _ in
            Task { try await harness.call(configuration, descriptor, "ReadValue", [.vardict([:])]).first?.bytes }
        }
        try await waitUntil("the three calls arrive") {
            await harness.simulator.statistics.readValueCalls - before.readValueCalls == 3
        }
        try await held(harness, 1)
        #expect(await harness.error(configuration, descriptor, "ReadValue", [.vardict(["offset": .uint16(1)])]) == inProgress)
        try await harness.simulator.holdGATT(false, of: address)
        for read in reads { #expect(try await read.value == [0x00, 0x00]) }
        #expect(await harness.simulator.statistics.peripheralReads - before.peripheralReads == 1)
    }

    @Test func aLinkLostFailsTheRequestsInFlight() async throws {
        let harness = try await connected()
        defer { Task { await harness.close() } }
        try await harness.simulator.holdGATT(true, of: address)
        let location = location, characteristic = characteristic
        let read = Task { await harness.error(location, characteristic, "ReadValue", [.vardict([:])]) }
        try await held(harness, 1)
        try await harness.simulator.dropConnection(address)
        #expect(await read.value == DBusError(ErrorName(unchecked: "org.bluez.Error.Failed"), "Not connected"))
    }
}
