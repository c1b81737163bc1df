import DBus

/// A read of one attribute on its way to the peripheral, and the
/// `ReadValue` calls merged into it.
struct ReadInFlight {
    let offset: Int
    var merged: [CheckedContinuation<Result<[UInt8], DBusError>, Never>] = []
}

// What bluetoothd 5.66 does with concurrent GATT calls (src/gatt-client.c,
// `characteristic_read_value`, `characteristic_write_value` and their
// descriptor twins; seen on the real daemon in the VM rig):
// - a ReadValue of an attribute whose read is in flight at the same offset
//   is merged into it: one ATT read, every caller gets its answer;
// - at another offset it is answered InProgress;
// - a WriteValue of an attribute whose write request is in flight is
//   answered InProgress, whatever its type (the check comes before the
//   options are read); a write command sets nothing in flight;
// - requests for different attributes go out on the device's ATT queue
//   one after the other, so they overlap as D-Bus calls.
extension SimulatorCore {
    /// A ReadValue of `path`: merged into the read in flight at `offset`,
    /// refused at another offset, else `read` (the ATT exchange) is done.
    func mergedRead(
        _ path: ObjectPath, offset: Int, _ read: () async throws(DBusError) -> [UInt8]
    ) async throws(DBusError) -> [UInt8] {
        counters.readValueCalls += 1
        if let flight = readsInFlight[path] {
            guard flight.offset == offset else {
                counters.inProgressReplies += 1
                throw BluetoothdError.inProgress
            }
            let result = await withCheckedContinuation { readsInFlight[path]?.merged.append($0) }
            return try result.get()
        }
        readsInFlight[path] = ReadInFlight(offset: offset)
        counters.peripheralReads += 1
        let result: Result<[UInt8], DBusError>
        do throws(DBusError) {
            result = .success(try await read())
        } catch {
            result = .failure(error)
        }
        for caller in readsInFlight.removeValue(forKey: path)?.merged ?? [] { caller.resume(returning: result) }
        return try result.get()
    }

    /// Refuses a WriteValue of `path` while its write request is in flight.
    func checkNoWriteInFlight(_ path: ObjectPath) throws(DBusError) {
        counters.writeValueCalls += 1
        guard !writesInFlight.contains(path) else {
            counters.inProgressReplies += 1
            throw BluetoothdError.inProgress
        }
    }

    /// Runs a write request of `path` (the ATT exchange) with the write
    /// marked in flight.
    func exclusiveWrite(_ path: ObjectPath, _ write: () async throws(DBusError) -> Void) async throws(DBusError) {
        writesInFlight.insert(path)
        defer { writesInFlight.remove(path) }
        try await write()
    }

    /// The peripheral's turn to answer an ATT request: at once, unless the
    /// control API holds its answers back. A link lost meanwhile fails the
    /// request.
    func peripheralAnswers(_ device: DeviceState) async throws(DBusError) {
        guard device.gattHeld else { return }
        let generation = device.connectionGeneration
        await withCheckedContinuation { device.heldRequests.append($0) }
        guard device.connected, device.connectionGeneration == generation else {
            throw BluetoothdError.failed("Not connected")
        }
    }

    /// Holds (or lets go) the peripheral's answers to ATT requests.
    func holdGATT(_ device: DeviceState, _ hold: Bool) {
        device.gattHeld = hold
        guard !hold else { return }
        let held = device.heldRequests
        device.heldRequests = []
        for request in held { request.resume() }
    }
}

extension SimulatorCore {
    func controlHoldGATT(_ hold: Bool, _ address: DeviceAddress) throws(SimulatorError) {
        holdGATT(try device(address), hold)
    }

    func heldRequestCount(_ address: DeviceAddress) throws(SimulatorError) -> Int {
        try device(address).heldRequests.count
    }
}
