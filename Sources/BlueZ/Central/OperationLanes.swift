import AsyncPrimitives
import DBus

/// The lanes operations on bluetoothd's objects run in: each operation
/// claims keys, shared or alone (see `Lanes`), and waits while one of them
/// conflicts with an operation running or queued before it. Waiting ends
/// with `BlueZError(.timeout)` at the deadline and with `CancellationError`
/// when the task is cancelled (at once when it already was).
///
/// How the central claims (`Central+GATT.swift` says why): connect,
/// disconnect and removal hold the device alone, as discovery changes hold
/// the adapter; GATT operations share the device and hold one attribute's
/// operation kind alone, as bluetoothd refuses a second concurrent one with
/// `InProgress`.
final class OperationLanes<Key: Hashable & Sendable>: Sendable {
    private let lanes = Lanes<Key>()

    /// Runs `body` once `claims` are granted.
    func run<T: Sendable>(
        _ claims: [LaneClaim<Key>], deadline: ContinuousClock.Instant, _ body: () async throws -> T
    ) async throws -> T {
        try await lanes.run(claims, deadline: deadline, timeout: Self.timeout, body)
    }

    /// Runs `body` alone on `key`, after every earlier operation on it.
    func run<T: Sendable>(_ key: Key, deadline: ContinuousClock.Instant, _ body: () async throws -> T)
        async throws -> T
    {
        try await lanes.run([.exclusive(key)], deadline: deadline, timeout: Self.timeout, body)
    }

    /// How many operations hold or wait for `key`.
    func occupancy(_ key: Key) -> (running: Int, waiting: Int) { lanes.occupancy(key) }

    private static func timeout() -> any Error {
        BlueZError(.timeout, "timed out waiting for earlier operations on the device")
    }
}

/// What the central's operations claim.
enum LaneKey: Hashable, Sendable {
    /// A device (connect, disconnect, removal: alone; GATT operations:
    /// shared) or an adapter (discovery changes, alone).
    case object(ObjectPath)
    /// The read in flight of a characteristic or descriptor.
    case reading(ObjectPath)
    /// The write in flight of a characteristic or descriptor.
    case writing(ObjectPath)
    /// StartNotify or StopNotify of a characteristic.
    case notifying(ObjectPath)
}

extension OperationLanes where Key == LaneKey {
    /// Runs `body` alone on a device or adapter, after every earlier
    /// operation on it.
    func run<T: Sendable>(_ path: ObjectPath, deadline: ContinuousClock.Instant, _ body: () async throws -> T)
        async throws -> T
    {
        try await run(.object(path), deadline: deadline, body)
    }
}

extension Promise where Failure == BlueZError {
    /// Waits for the result; at `deadline` the promise resolves with
    /// `timeout`, and a cancelled task resolves it with `.cancelled`.
    func wait(deadline: ContinuousClock.Instant?, timeout: BlueZError) async -> Result<Value, BlueZError> {
        let cancelled = BlueZError(.cancelled, "the operation was cancelled")
        return await wait(deadline: deadline, timeout: timeout, cancelled: cancelled)
    }
}
