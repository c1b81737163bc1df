import BlueZSimulator
import DBus
import Testing
import TestSupport

@testable import BlueZ

/// Concurrent GATT operations through the central against the simulator,
/// which treats them as bluetoothd 5.66 does. The simulated peripheral
/// holds its answers back, so that operations meet in flight for sure.
@Suite(.serialized) struct ConcurrentGATTTests {
    static let strapAddress = DeviceAddress("C4:7C:8D:6A:3E:01")!

    /// A harness with the strap connected and its peripheral holding its
    /// ATT answers.
    private func holding() async throws -> Harness {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        try await harness.simulator.holdGATT(true, of: Self.strapAddress)
        return harness
    }

    private func path(_ uuid: BluetoothUUID, _ harness: Harness) throws -> ObjectPath {
        try harness.central.resolveCharacteristic(.uuid(uuid), of: Harness.strap, adapter: nil).1.path
    }

    private func sharedReaders(_ uuid: BluetoothUUID, _ harness: Harness) throws -> Int {
        harness.central.reads.waiting(ReadKey(path: try path(uuid, harness), offset: 0))
    }

    private func heldRequests(_ harness: Harness, _ count: Int) async throws -> Bool {
        try await eventually { try await harness.simulator.heldGATTRequests(of: Self.strapAddress) == count }
    }

    @Test func concurrentReadsOfOneValueShareOneReadValue() async throws {
        let harness = try await holding()
        let central = harness.central
        let before = await harness.simulator.statistics
        let reads = (0..<16).map { _ in Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) } }
        #expect(try await eventually { try sharedReaders(Harness.sensorLocation, harness) == 16 })
        #expect(try await heldRequests(harness, 1))
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        for read in reads { #expect(try await read.value == [0x01]) }
        let after = await harness.simulator.statistics
        #expect(after.readValueCalls - before.readValueCalls == 1)
        #expect(after.peripheralReads - before.peripheralReads == 1)
        await harness.shutdown()
    }

    @Test func readsOfDifferentCharacteristicsOverlap() async throws {
        let harness = try await holding()
        let central = harness.central
        let location = Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) }
        let battery = Task { try await central.read(.uuid(Harness.batteryLevel), of: Harness.strap) }
        // Both reads are at the peripheral at once: neither waited for the other.
        #expect(try await heldRequests(harness, 2))
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        #expect(try await location.value == [0x01])
        #expect(try await battery.value.count == 1)
        await harness.shutdown()
    }

    @Test func aSecondWriteWaitsForTheFirstInsteadOfSeeingInProgress() async throws {
        let harness = try await holding()
        let central = harness.central
        let before = await harness.simulator.statistics
        let controlPoint = try path(Harness.controlPoint, harness)
        let first = Task { try await central.write([0x01], to: .uuid(Harness.controlPoint), of: Harness.strap) }
        #expect(try await heldRequests(harness, 1))
        let second = Task { try await central.write([0x01], to: .uuid(Harness.controlPoint), of: Harness.strap) }
        #expect(await eventually { central.lanes.occupancy(.writing(controlPoint)).waiting == 1 })
        // Another client is refused, as bluetoothd refuses it.
        await #expect {
            try await harness.otherClientCall(
                controlPoint, GattCharacteristic1.interface, "WriteValue", [.bytes([0x01]), .vardict([:])])
        } throws: { ($0 as? DBusError)?.name.rawValue == "org.bluez.Error.InProgress" }
        #expect(await harness.simulator.statistics.writeValueCalls - before.writeValueCalls == 2)
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        try await first.value
        try await second.value
        let after = await harness.simulator.statistics
        #expect(after.writeValueCalls - before.writeValueCalls == 3)
        #expect(after.inProgressReplies - before.inProgressReplies == 1)
        await harness.shutdown()
    }

    @Test func aReadAtAnotherOffsetWaitsForTheReadInFlight() async throws {
        let harness = try await holding()
        let central = harness.central
        let before = await harness.simulator.statistics
        let whole = Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) }
        #expect(try await heldRequests(harness, 1))
        let tail = Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap, offset: 1) }
        let location = try path(Harness.sensorLocation, harness)
        #expect(await eventually { central.lanes.occupancy(.reading(location)).waiting == 1 })
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        #expect(try await whole.value == [0x01])
        #expect(try await tail.value == [])
        let after = await harness.simulator.statistics
        #expect(after.readValueCalls - before.readValueCalls == 2)
        #expect(after.inProgressReplies == before.inProgressReplies)
        await harness.shutdown()
    }

    @Test func aDisconnectWaitsForTheReadInFlightAndLaterReadsWaitForIt() async throws {
        let harness = try await holding()
        let central = harness.central
        let device = try #require(try path(Harness.sensorLocation, harness).parent?.parent)
        let read = Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) }
        #expect(try await heldRequests(harness, 1))
        let disconnect = Task { try await central.disconnect(Harness.strap) }
        #expect(await eventually { central.lanes.occupancy(.object(device)).waiting == 1 })
        // A read that arrives after the disconnect is not let past it.
        let late = Task { try await central.read(.uuid(Harness.batteryLevel), of: Harness.strap) }
        #expect(await eventually { central.lanes.occupancy(.object(device)).waiting == 2 })
        #expect(try await harness.simulator.heldGATTRequests(of: Self.strapAddress) == 1)
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        #expect(try await read.value == [0x01])
        try await disconnect.value
        await #expect { try await late.value } throws: { ($0 as? BlueZError)?.code == .notConnected }
        await harness.shutdown()
    }

    @Test func cancellingOneWaiterOfASharedReadLeavesTheOthers() async throws {
        let harness = try await holding()
        let central = harness.central
        let before = await harness.simulator.statistics
        let reads = (0..<3).map { _ in Task { try await central.read(.uuid(Harness.sensorLocation), of: Harness.strap) } }
        #expect(try await eventually { try sharedReaders(Harness.sensorLocation, harness) == 3 })
        reads[0].cancel()
        await #expect { try await reads[0].value } throws: { ($0 as? BlueZError)?.code == .cancelled }
        #expect(try sharedReaders(Harness.sensorLocation, harness) == 2)
        try await harness.simulator.holdGATT(false, of: Self.strapAddress)
        #expect(try await reads[1].value == [0x01])
        #expect(try await reads[2].value == [0x01])
        #expect(await harness.simulator.statistics.readValueCalls - before.readValueCalls == 1)
        await harness.shutdown()
    }
}
