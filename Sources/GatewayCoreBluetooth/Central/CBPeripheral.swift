import Foundation
import Synchronization

/// A remote peripheral, reached through the gateway.
///
/// `@unchecked Sendable`: its state, services and their attributes change
/// only on its manager's queue, where its delegate is called; the calls
/// the app makes only enqueue work (`SerialWork`), which reaches the
/// gateway in order.
public class CBPeripheral: CBPeer, @unchecked Sendable {
    public weak var delegate: (any CBPeripheralDelegate)?
    public internal(set) var name: String?
    public internal(set) var state: CBPeripheralState = .disconnected
    public internal(set) var services: [CBService]?
    /// The adapter the gateway reaches it through (nil: the gateway's default).
    public let adapter: String?

    /// Its manager's queue, gateway and restore identifier (not the
    /// manager itself: a peripheral the app keeps may outlive it).
    let queue: DispatchQueue
    let gateway: GatewayClient?
    let restoreIdentifier: String?
    /// Reached through the gateway's fleet (`/v1/fleet/devices/…`).
    let fleet: Bool
    let work = SerialWork()
    /// Every service the gateway listed since the connection was made.
    var knownServices: [CBService]?
    /// The connection's ATT MTU, as the gateway last listed it.
    let mtu = Mutex<Int?>(nil)
    /// The open notification stream of each notifying characteristic.
    var notificationStreams: [ObjectIdentifier: EventStream] = [:]
    /// Write commands sent and not yet answered by the gateway.
    private let commandsInFlight = Mutex(0)
    /// How many write commands may be on their way at once.
    static let commandWindow = 8

    init(manager: CBCentralManager, gateway: URL, address: String, adapter: String?) {
        queue = manager.queue
        self.gateway = manager.gateway
        restoreIdentifier = manager.restoreIdentifier
        fleet = manager.fleet
        self.adapter = adapter
        super.init(gateway: gateway, address: address)
    }

    var path: String { fleet ? "/v1/fleet/devices/\(address)" : "/v1/devices/\(address)" }
    var adapterQuery: [URLQueryItem] { adapter.map { [URLQueryItem(name: "adapter", value: $0)] } ?? [] }

    /// Runs `body` on the manager's queue with the delegate.
    func deliver(_ body: @escaping @Sendable (CBPeripheral, (any CBPeripheralDelegate)?) -> Void) {
        queue.async { body(self, self.delegate) }
    }

    /// Enqueues a gateway operation; a manager without a gateway fails it.
    func perform(_ operation: @escaping @Sendable (GatewayClient) async -> Void) {
        guard let gateway else { return }
        work.enqueue { await operation(gateway) }
    }

    // MARK: Discovery

    public func discoverServices(_ serviceUUIDs: [CBUUID]?) {
        perform { gateway in
            let result = await self.fetchServices(gateway)
            self.deliver { peripheral, delegate in
                if case .success(let known) = result {
                    peripheral.services = known.filter { service in serviceUUIDs.map { $0.contains(service.uuid) } ?? true }
                }
                delegate?.peripheral(peripheral, didDiscoverServices: result.error)
            }
        }
    }

    public func discoverIncludedServices(_ includedServiceUUIDs: [CBUUID]?, for service: CBService) {
        perform { gateway in
            let result = await self.fetchServices(gateway)
            self.deliver { peripheral, delegate in
                if result.error == nil {
                    service.discoveredIncludedServices = (service.discoveredIncludedServices ?? []).filter { included in
                        includedServiceUUIDs.map { $0.contains(included.uuid) } ?? true
                    }
                }
                delegate?.peripheral(peripheral, didDiscoverIncludedServicesFor: service, error: result.error)
            }
        }
    }

    public func discoverCharacteristics(_ characteristicUUIDs: [CBUUID]?, for service: CBService) {
        perform { gateway in
            let result = await self.fetchServices(gateway)
            self.deliver { peripheral, delegate in
                if result.error == nil {
                    service.discoveredCharacteristics = service.knownCharacteristics.filter { characteristic in
                        characteristicUUIDs.map { $0.contains(characteristic.uuid) } ?? true
                    }
                }
                delegate?.peripheral(peripheral, didDiscoverCharacteristicsFor: service, error: result.error)
            }
        }
    }

    public func discoverDescriptors(for characteristic: CBCharacteristic) {
        perform { gateway in
            let result = await self.fetchServices(gateway)
            self.deliver { peripheral, delegate in
                if result.error == nil { characteristic.discoveredDescriptors = characteristic.knownDescriptors }
                delegate?.peripheral(peripheral, didDiscoverDescriptorsFor: characteristic, error: result.error)
            }
        }
    }

    /// The GATT tree, fetched once per connection: the same objects on
    /// every discovery, as Core Bluetooth keeps them.
    func fetchServices(_ gateway: GatewayClient) async -> Result<[CBService], any Error> {
        if let known = await onQueue({ self.knownServices }) { return .success(known) }
        do {
            let listed = try await gateway.decode([GatewayJSON.Service].self, "GET", path + "/services", query: adapterQuery)
            return .success(await onQueue { self.adopt(listed) })
        } catch {
            return .failure(CBError.from(error))
        }
    }

    private func adopt(_ listed: [GatewayJSON.Service]) -> [CBService] {
        if let known = knownServices { return known }
        // The gateway gives UUIDs in canonical form; one that is not is skipped.
        let services = listed.compactMap { json -> CBService? in
            guard let uuid = CBUUID(validating: json.uuid) else { return nil }
            let service = CBService(uuid: uuid, isPrimary: json.primary, peripheral: self)
            service.handle = json.handle
            service.knownCharacteristics = json.characteristics.compactMap { json in
                guard let uuid = CBUUID(validating: json.uuid) else { return nil }
                let characteristic = CBCharacteristic(
                    uuid: uuid, properties: CBCharacteristicProperties(bluezFlags: json.flags), value: nil, service: service)
                characteristic.handle = json.handle
                characteristic.knownDescriptors = json.descriptors.compactMap { json in
                    guard let uuid = CBUUID(validating: json.uuid) else { return nil }
                    let descriptor = CBDescriptor(uuid: uuid, value: nil, characteristic: characteristic)
                    descriptor.handle = json.handle
                    return descriptor
                }
                return characteristic
            }
            return service
        }
        for service in services { service.discoveredIncludedServices = [] }
        knownServices = services
        return services
    }

    /// Forgets the GATT tree and ends notifications (the link is gone).
    func connectionEnded() {
        for characteristic in knownServices?.flatMap(\.knownCharacteristics) ?? [] { characteristic.isNotifying = false }
        for stream in notificationStreams.values { stream.close() }
        notificationStreams = [:]
        knownServices = nil
        services = nil
    }

    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: body()) } }
    }

    // MARK: Values

    func valuePath(_ characteristic: CBCharacteristic) -> String {
        "\(path)/characteristics/\(characteristic.gatewayName)"
    }

    func valuePath(_ descriptor: CBDescriptor) -> String {
        let characteristic = descriptor.characteristic.map(valuePath) ?? path
        return "\(characteristic)/descriptors/\(descriptor.handle.map { "handle:\($0)" } ?? descriptor.uuid.gatewayString)/value"
    }

    public func readValue(for characteristic: CBCharacteristic) {
        perform { gateway in
            let result = await Self.read(gateway, self.valuePath(characteristic) + "/value", self.adapterQuery)
            self.deliver { peripheral, delegate in
                if case .success(let value) = result { characteristic.currentValue = value }
                delegate?.peripheral(peripheral, didUpdateValueFor: characteristic, error: result.error)
            }
        }
    }

    public func readValue(for descriptor: CBDescriptor) {
        perform { gateway in
            let result = await Self.read(gateway, self.valuePath(descriptor), self.adapterQuery)
            self.deliver { peripheral, delegate in
                if case .success(let value) = result { descriptor.currentValue = CBDescriptor.value(value, of: descriptor.uuid) }
                delegate?.peripheral(peripheral, didUpdateValueFor: descriptor, error: result.error)
            }
        }
    }

    static func read(_ gateway: GatewayClient, _ path: String, _ query: [URLQueryItem]) async -> Result<Data, any Error> {
        do {
            let value = try await gateway.decode(GatewayJSON.Value.self, "GET", path, query: query)
            guard let data = Hex.decode(value.value) else { throw GatewayError(detail: "the gateway sent '\(value.value)', not hex") }
            return .success(data)
        } catch {
            return .failure(CBError.from(error))
        }
    }

    /// Writes with a response (`didWriteValueFor` follows) or as a command
    /// (no callback; see `canSendWriteWithoutResponse`).
    public func writeValue(_ data: Data, for characteristic: CBCharacteristic, type: CBCharacteristicWriteType) {
        let body = GatewayJSON.Write(value: Hex.encode(data), type: type == .withResponse ? "request" : "command")
        if type == .withoutResponse { commandsInFlight.withLock { $0 += 1 } }
        perform { gateway in
            let failure: (any Error)?
            do {
                try await gateway.send("PUT", self.valuePath(characteristic) + "/value", query: self.adapterQuery, json: body)
                failure = nil
            } catch {
                failure = CBError.from(error)
            }
            guard type == .withResponse else {
                let reopened = self.commandsInFlight.withLock { count in
                    count -= 1
                    return count == Self.commandWindow - 1
                }
                if reopened { self.deliver { peripheral, delegate in delegate?.peripheralIsReady(toSendWriteWithoutResponse: peripheral) } }
                return
            }
            self.deliver { peripheral, delegate in delegate?.peripheral(peripheral, didWriteValueFor: characteristic, error: failure) }
        }
    }

    public func writeValue(_ data: Data, for descriptor: CBDescriptor) {
        perform { gateway in
            let failure: (any Error)?
            do {
                try await gateway.send(
                    "PUT", self.valuePath(descriptor), query: self.adapterQuery, json: GatewayJSON.Value(hex: Hex.encode(data)))
                failure = nil
            } catch {
                failure = CBError.from(error)
            }
            self.deliver { peripheral, delegate in delegate?.peripheral(peripheral, didWriteValueFor: descriptor, error: failure) }
        }
    }

    /// Whether a write command can go now: false while `commandWindow`
    /// commands are on their way; `peripheralIsReady(toSendWriteWithoutResponse:)`
    /// follows when one more can.
    public var canSendWriteWithoutResponse: Bool { commandsInFlight.withLock { $0 < Self.commandWindow } }

    /// 512 bytes with a response (ATT's longest value); the connection's
    /// MTU less 3 without.
    public func maximumWriteValueLength(for type: CBCharacteristicWriteType) -> Int {
        type == .withResponse ? 512 : max(20, (mtu.withLock { $0 } ?? 23) - 3)
    }

    public func readRSSI() {
        perform { gateway in
            let result: Result<Int, any Error>
            do {
                // Through the fleet: the strongest signal any gateway hears.
                let rssi =
                    self.fleet
                    ? try await gateway.decode(GatewayJSON.FleetDevice.self, "GET", self.path).rssi
                    : try await gateway.decode(GatewayJSON.Device.self, "GET", self.path, query: self.adapterQuery).rssi
                if let rssi, rssi != 127 {
                    result = .success(rssi)
                } else {
                    result = .failure(CBError(.unknown, detail: "bluetoothd reports no RSSI for \(self.address) now"))
                }
            } catch {
                result = .failure(CBError.from(error))
            }
            self.deliver { peripheral, delegate in
                delegate?.peripheral(peripheral, didReadRSSI: NSNumber(value: (try? result.get()) ?? 127), error: result.error)
            }
        }
    }

    /// L2CAP channels have no counterpart through the gateway: the delegate
    /// gets `CBError.unsupported`.
    public func openL2CAPChannel(_ PSM: CBL2CAPPSM) {
        deliver { peripheral, delegate in
            delegate?.peripheral(
                peripheral, didOpen: nil,
                error: CBError.unsupported("openL2CAPChannel", "the gateway's API carries GATT, not L2CAP channels"))
        }
    }

    public override var description: String {
        "<CBPeripheral \(identifier.uuidString) \(address) name=\(name ?? "(none)") state=\(state)>"
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
