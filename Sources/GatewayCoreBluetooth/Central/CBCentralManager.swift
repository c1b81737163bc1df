import Foundation
import Synchronization

/// Scans for, connects to and uses peripherals through the gateway, with
/// Core Bluetooth's API.
///
/// - `state` comes from the gateway's adapter (`GET /v1`), and follows
///   `adapter-state` and `bluez-state` events.
/// - `connect(_:options:)` is the gateway's kept connection
///   (`PUT /v1/devices/{address}/keep`): it never times out, and the
///   gateway reconnects after a loss (`didDisconnectPeripheral` with an
///   error, then `didConnect` again) until `cancelPeripheralConnection`.
/// - With `CBCentralManagerOptionRestoreIdentifierKey`, kept connections
///   and standing subscriptions carry the identifier as their `label`; a
///   manager made later with the same identifier (in a new process, or
///   after the gateway restarted) gets them in `willRestoreState`.
/// - With `CBManagerOptionGatewayFleetKey`, it reaches every device any
///   gateway of the gateway's fleet hears: scans report what the fleet's
///   gateways publish (`GET /v1/fleet/events`); `connect` keeps the
///   peripheral by the fleet (`"fleet": true`: the gateway that hears it
///   best holds it, and another takes it over when that one loses it), and
///   it is browsed, read, written and subscribed to through
///   `/v1/fleet/devices/…` on its holder. State restoration stays one
///   gateway's: through a fleet nothing is restored.
///
/// `@unchecked Sendable`: `state`, `isScanning` and the peripherals'
/// states change only on `queue`; the registry of peripherals is behind a
/// mutex, since `retrievePeripherals` may be called from any thread.
open class CBCentralManager: CBManager, @unchecked Sendable {
    public weak var delegate: (any CBCentralManagerDelegate)?
    public internal(set) var isScanning = false
    /// The restore identifier from the options.
    public let restoreIdentifier: String?
    /// The adapter from the options (`CBManagerOptionGatewayAdapterKey`); nil: the gateway's default.
    public let adapter: String?

    struct Registry {
        var peripherals: [String: CBPeripheral] = [:]
        var devices: [String: GatewayJSON.Device] = [:]
    }
    let registry = Mutex(Registry())
    /// The running scan's stream (on `queue`).
    var scanStream: EventStream?

    public convenience init() { self.init(delegate: nil, queue: nil, options: nil) }

    public convenience init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    /// Calls the delegate on `queue` (the main queue when nil); the gateway
    /// is found as `GatewayLocation` says.
    public init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        restoreIdentifier = options?[CBCentralManagerOptionRestoreIdentifierKey] as? String
        adapter = options?[CBManagerOptionGatewayAdapterKey] as? String
        super.init(queue: queue, options: options)
        self.delegate = delegate
        followTask = Task { [weak self] in await self?.follow() }
    }

    deinit { scanStream?.close() }

    public override func invalidate() {
        super.invalidate()
        let peripherals = registry.withLock { Array($0.peripherals.values) }
        queue.async {
            self.scanStream?.close()
            self.scanStream = nil
            self.isScanning = false
            for peripheral in peripherals {
                for stream in peripheral.notificationStreams.values { stream.close() }
            }
        }
    }

    var adapterQuery: [URLQueryItem] { adapter.map { [URLQueryItem(name: "adapter", value: $0)] } ?? [] }

    /// Runs `body` on the queue with the delegate.
    func deliver(_ body: @escaping @Sendable (CBCentralManager, (any CBCentralManagerDelegate)?) -> Void) {
        queue.async { body(self, self.delegate) }
    }

    /// The peripheral object of an address: one per device and manager,
    /// on the adapter the gateway listed it on (or `adapter`).
    func peripheral(_ address: String, device: GatewayJSON.Device? = nil, adapter: String? = nil) -> CBPeripheral {
        let url = gateway?.baseURL ?? URL(fileURLWithPath: "/")
        let peripheral = registry.withLock { registry in
            if let device { registry.devices[address] = device }
            if let known = registry.peripherals[address] { return known }
            let peripheral = CBPeripheral(manager: self, gateway: url, address: address, adapter: adapter ?? device?.adapter ?? self.adapter)
            peripheral.name = device?.name ?? device?.alias
            registry.peripherals[address] = peripheral
            return peripheral
        }
        if let mtu = device?.mtu { peripheral.mtu.withLock { $0 = mtu } }
        return peripheral
    }

    // MARK: State and events

    private func follow() async {
        // The fleet's stream has every gateway's events, unfiltered; a
        // connection kept there shows as `services-resolved` (the bridge
        // publishes no `kept-connected`).
        await follow(
            fleet ? "/v1/fleet/events" : "/v1/events",
            query: fleet
                ? []
                : [
                    URLQueryItem(
                        name: "type",
                        value: "adapter-state,bluez-state,device-connected,device-disconnected,kept-connected,given-up")
                ],
            refresh: { [unowned self] gateway, restoring throws(GatewayError) in try await refresh(gateway, restoring: restoring) },
            handle: { [unowned self] event, gateway in
                if let json = try? event.decode(GatewayJSON.Event.self) { await handle(json, gateway) }
            })
    }

    /// Reads the adapter and the devices, restores, and says the state.
    private func refresh(_ gateway: GatewayClient, restoring: Bool) async throws(GatewayError) {
        let info = try await gateway.decode(GatewayJSON.Info.self, "GET", "/v1")
        // Through a fleet, devices become known as its events tell of them.
        let devices =
            fleet ? [] : try await gateway.decode([GatewayJSON.Device].self, "GET", "/v1/devices", query: adapterQuery)
        registry.withLock { registry in
            for device in devices { registry.devices[device.address] = device }
        }
        if restoring, !fleet { try await restore(gateway) }
        await setState(Self.state(of: info, adapter: adapter))
    }

    override func reportState() {
        if state != .poweredOn { isScanning = false }
        delegate?.centralManagerDidUpdateState(self)
    }

    private func handle(_ event: GatewayJSON.Event, _ gateway: GatewayClient) async {
        switch event.type {
        case "adapter-state", "bluez-state":
            if let info = try? await gateway.decode(GatewayJSON.Info.self, "GET", "/v1") {
                await setState(Self.state(of: info, adapter: adapter))
            }
        case "device-connected", "device-disconnected":
            guard let address = event.address else { return }
            if let device = event.device { registry.withLock { $0.devices[address] = device } }
            guard event.type == "device-disconnected", let peripheral = registry.withLock({ $0.peripherals[address] }) else { return }
            let reason = event.reason ?? "the link was lost"
            deliver { manager, delegate in
                guard peripheral.state == .connected else { return }
                peripheral.connectionEnded()
                // The gateway keeps the connection: it is being made again.
                peripheral.state = .connecting
                delegate?.centralManager(
                    manager, didDisconnectPeripheral: peripheral,
                    error: CBError(.peripheralDisconnected, detail: "\(address) disconnected (\(reason)); the gateway reconnects"))
            }
        case "services-resolved" where fleet:
            guard let address = event.address, let peripheral = registry.withLock({ $0.peripherals[address] }) else { return }
            didConnect(peripheral)
        case "kept-connected":
            guard let address = event.address, let peripheral = registry.withLock({ $0.peripherals[address] }) else { return }
            didConnect(peripheral)
            if restoreIdentifier != nil { peripheral.perform { gateway in await self.resumeStandingSubscriptions(peripheral, gateway) } }
        case "given-up":
            guard let address = event.address, let peripheral = registry.withLock({ $0.peripherals[address] }) else { return }
            let reason = event.reason ?? "it could not be reached"
            deliver { manager, delegate in
                guard peripheral.state == .connecting else { return }
                peripheral.state = .disconnected
                delegate?.centralManager(
                    manager, didFailToConnect: peripheral,
                    error: CBError(.connectionFailed, detail: "the gateway gave up connecting to \(address): \(reason)"))
            }
        default:
            break
        }
    }

    func didConnect(_ peripheral: CBPeripheral) {
        deliver { manager, delegate in
            guard peripheral.state == .connecting else { return }
            peripheral.state = .connected
            delegate?.centralManager(manager, didConnect: peripheral)
        }
    }

    // MARK: Connections

    /// Connects, and keeps the peripheral connected: the gateway's kept
    /// connection, which never times out. The options of Core Bluetooth
    /// (alerts, start delay) have no effect through the gateway.
    public func connect(_ peripheral: CBPeripheral, options: [String: Any]? = nil) {
        let label = restoreIdentifier
        queue.async {
            if peripheral.state == .disconnected || peripheral.state == .disconnecting { peripheral.state = .connecting }
        }
        peripheral.perform { gateway in
            do {
                if self.fleet {
                    // The holder's `services-resolved` says when it is
                    // connected; one it already has is connected now.
                    try await gateway.send("PUT", peripheral.path + "/keep", json: KeepRequest(label: label, fleet: true))
                    let device = try await gateway.decode(GatewayJSON.FleetDevice.self, "GET", peripheral.path)
                    if let owner = device.owner, device.connectedOn == [owner] { self.didConnect(peripheral) }
                    return
                }
                let kept = try await gateway.decode(
                    GatewayJSON.KeptConnection.self, "PUT", peripheral.path + "/keep", query: peripheral.adapterQuery,
                    json: KeepRequest(label: label))
                if kept.status == "connected" { self.didConnect(peripheral) }
            } catch {
                let error = CBError.from(error)
                self.deliver { manager, delegate in
                    guard peripheral.state == .connecting else { return }
                    peripheral.state = .disconnected
                    delegate?.centralManager(manager, didFailToConnect: peripheral, error: error)
                }
            }
        }
    }

    /// Ends keeping the peripheral, its standing subscriptions (with a
    /// restore identifier) and the connection; `didDisconnectPeripheral`
    /// follows with no error.
    public func cancelPeripheralConnection(_ peripheral: CBPeripheral) {
        queue.async { peripheral.state = .disconnecting }
        let restoring = restoreIdentifier != nil && !fleet
        peripheral.perform { gateway in
            var failure: GatewayError?
            do throws(GatewayError) {
                try await gateway.send("DELETE", peripheral.path + "/keep", query: peripheral.adapterQuery)
            } catch where error.status == 404 {
            } catch {
                failure = error
            }
            if restoring {
                do throws(GatewayError) {
                    try await peripheral.removeStandingSubscriptions(gateway)
                } catch {
                    failure = failure ?? error
                }
            }
            if self.fleet, failure == nil { await Self.waitForRelease(of: peripheral, gateway) }
            do throws(GatewayError) {
                try await gateway.send("POST", peripheral.path + "/disconnect", query: peripheral.adapterQuery)
            } catch where error.status == 404 || error.status == 409 {
            } catch {
                failure = failure ?? error
            }
            let error = failure.map(CBError.from)
            self.deliver { manager, delegate in
                peripheral.connectionEnded()
                peripheral.state = .disconnected
                delegate?.centralManager(manager, didDisconnectPeripheral: peripheral, error: error)
            }
        }
    }

    /// Through a fleet, the holder lets the device go (and disconnects it)
    /// after the fleet's keep is gone, a moment later: a disconnect sent
    /// before that would be undone by the holder reconnecting. Waits until
    /// the fleet's view shows no holder and no connection, at most 15 s.
    private static func waitForRelease(of peripheral: CBPeripheral, _ gateway: GatewayClient) async {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            guard let device = try? await gateway.decode(GatewayJSON.FleetDevice.self, "GET", peripheral.path),
                device.owner != nil || !device.connectedOn.isEmpty
            else { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The peripherals with these identifiers among the devices the gateway
    /// listed and this manager has seen.
    public func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBPeripheral] {
        let url = gateway?.baseURL ?? URL(fileURLWithPath: "/")
        let devices = registry.withLock { Array($0.devices.values) }
        let wanted = Set(identifiers)
        return devices.filter { wanted.contains(CBPeer.identifier(gateway: url, address: $0.address)) }
            .map { peripheral($0.address, device: $0) }
    }

    /// The connected peripherals that have one of these services.
    public func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBUUID]) -> [CBPeripheral] {
        let devices = registry.withLock { Array($0.devices.values) }
        return devices.filter { device in
            device.connected
                && (device.serviceUuids ?? []).contains { uuid in CBUUID(validating: uuid).map(serviceUUIDs.contains) ?? false }
        }.map { peripheral($0.address, device: $0) }
    }

    /// Connection events (`registerForConnectionEvents`) have no
    /// counterpart: bluetoothd reports no connection events of other apps.
    public func registerForConnectionEvents(options: [String: Any]? = nil) throws {
        throw CBError.unsupported("registerForConnectionEvents", "bluetoothd does not report other clients' connection events")
    }

    /// Whether a feature is there: `extendedScanAndConnect` is (BlueZ picks
    /// it when the controller has it); the others are Apple's own.
    public class func supports(_ features: Feature) -> Bool { features.subtracting(.extendedScanAndConnect).isEmpty }

    public struct Feature: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let extendedScanAndConnect = Feature(rawValue: 1)
    }
}

struct KeepRequest: Encodable, Sendable {
    var label: String?
    /// Kept by the fleet (through `/v1/fleet/devices/{address}/keep`).
    var fleet: Bool?
}
