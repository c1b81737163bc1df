#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything that happens, for the API's combined event stream
/// (`Central.events()`).
public enum CentralEvent: Sendable, Hashable {
    /// An adapter appeared, changed power, or went away (`.unavailable`,
    /// also for every adapter when bluetoothd stops).
    case adapterState(adapter: String, AdapterState)
    /// Other properties of an adapter changed (discovering, name, ...).
    case adapterUpdated(Adapter)
    /// bluetoothd created a device object (an advertisement was heard, or
    /// the device is known from before).
    case deviceDiscovered(Device)
    /// Properties of a device changed (advertisement data, RSSI, state).
    case deviceUpdated(Device)
    /// bluetoothd removed the device object.
    case deviceLost(Device)
    case connected(Device)
    /// The device disconnected; the reason when bluetoothd gave one.
    case disconnected(Device, reason: String?)
    case servicesResolved(Device)
    /// A characteristic's value changed: a notification or indication, or
    /// the value a read returned (bluetoothd reports both alike).
    case characteristicValue(CharacteristicValue)
    /// BlueZ became reachable or unreachable (bluetoothd started or
    /// stopped, the bus connection was lost or restored).
    case availability(BlueZAvailability)
}

/// A value of a characteristic, with where and when it came from.
public struct CharacteristicValue: Sendable, Hashable {
    public var adapter: String
    public var device: BluetoothAddress
    public var service: BluetoothUUID?
    public var characteristic: BluetoothUUID
    public var handle: UInt16?
    public var value: [UInt8]
    /// When the central received it.
    public var timestamp: Date
    /// Shared by every subscriber that receives this notification: what
    /// they derive from it (an encoding) is made once. Not part of the
    /// value's equality.
    public let derived: DerivedValues

    public init(
        adapter: String, device: BluetoothAddress, service: BluetoothUUID?, characteristic: BluetoothUUID,
        handle: UInt16?, value: [UInt8], timestamp: Date, derived: DerivedValues = DerivedValues()
    ) {
        self.adapter = adapter
        self.device = device
        self.service = service
        self.characteristic = characteristic
        self.handle = handle
        self.value = value
        self.timestamp = timestamp
        self.derived = derived
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.adapter, lhs.device, lhs.service, lhs.characteristic) == (rhs.adapter, rhs.device, rhs.service, rhs.characteristic)
            && (lhs.handle, lhs.value, lhs.timestamp) == (rhs.handle, rhs.value, rhs.timestamp)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(adapter)
        hasher.combine(device)
        hasher.combine(service)
        hasher.combine(characteristic)
        hasher.combine(handle)
        hasher.combine(value)
        hasher.combine(timestamp)
    }
}
