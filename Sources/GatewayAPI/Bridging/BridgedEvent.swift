import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayCore

/// A gateway event as `GET /v1/events` carries it, for a transport other
/// than SSE (the MQTT bridge): its type, what it is about, and its JSON.
public struct BridgedEvent: Sendable {
    /// The event type (`device-connected`, `characteristic-value`, …).
    public let type: String
    /// The adapter it is about (`hci0`), if any.
    public let adapter: String?
    /// The device it is about (canonical address), if any.
    public let device: String?
    /// For `characteristic-value`: the characteristic's UUID (full form).
    public let characteristic: String?
    /// The event's JSON, one line, the same as the SSE `data:` line.
    public let json: String
    /// For device events: the signal strength of the device's latest
    /// advertisement (dBm), if known.
    public let rssi: Int?
    /// For `characteristic-value`: the value's bytes.
    public let value: [UInt8]?
    /// For device events: the device as the event left it (its name,
    /// advertisement, connection).
    public let snapshot: Device?

    init(_ event: CentralEvent) {
        let logged = LoggedEvent.central(event)
        type = logged.type
        device = logged.device
        json = GatewayEvent.json(logged, at: Date()).text
        switch event {
        case .adapterState(let adapter, _): self.adapter = adapter
        case .adapterUpdated(let adapter): self.adapter = adapter.id
        case .deviceDiscovered(let device), .deviceUpdated(let device), .deviceLost(let device),
            .connected(let device), .servicesResolved(let device), .disconnected(let device, _):
            self.adapter = device.adapter
        case .characteristicValue(let value): self.adapter = value.adapter
        case .availability: self.adapter = nil
        }
        switch event {
        case .deviceDiscovered(let device), .deviceUpdated(let device): rssi = device.advertisement.rssi.map(Int.init)
        default: rssi = nil
        }
        switch event {
        case .deviceDiscovered(let device), .deviceUpdated(let device), .deviceLost(let device),
            .connected(let device), .servicesResolved(let device), .disconnected(let device, _):
            snapshot = device
        default: snapshot = nil
        }
        if case .characteristicValue(let value) = event {
            characteristic = value.characteristic.uuidString
            self.value = value.value
        } else {
            characteristic = nil
            self.value = nil
        }
    }
}
