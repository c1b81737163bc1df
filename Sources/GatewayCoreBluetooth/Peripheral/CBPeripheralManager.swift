import Foundation
import Synchronization

/// Publishes services and advertises through the gateway, with Core
/// Bluetooth's API: each added service is a gateway application
/// (`POST /v1/peripheral/applications`), an advertisement is
/// `POST /v1/peripheral/advertisements`, and centrals' requests and
/// subscriptions come from `GET /v1/peripheral/events`.
///
/// A characteristic published with a value is read-only and answered by
/// the gateway; one without a value sends every read and write to the
/// delegate, which answers with `respond(to:withResult:)`, as Core
/// Bluetooth does.
///
/// `@unchecked Sendable`: `state`, `isAdvertising` and the published
/// services change only on `queue`; the transmit queue of `updateValue`
/// is behind a mutex, since it answers at once on any thread.
open class CBPeripheralManager: CBManager, @unchecked Sendable {
    public weak var delegate: (any CBPeripheralManagerDelegate)?
    public internal(set) var isAdvertising = false
    public let restoreIdentifier: String?
    public let adapter: String?

    /// The gateway application of each added service (on `queue`).
    var applications: [(service: CBMutableService, id: String)] = []
    var centrals: [String: CBCentral] = [:]
    /// The centrals connected to the published applications, first first.
    var connectedCentrals: [String] = []
    var advertisementID: String?
    /// Adds, removals, advertising and answers reach the gateway in order.
    let work = SerialWork()
    /// Values sent with `updateValue`, in order.
    let transmissions = SerialWork()

    struct TransmitQueue {
        var pending = 0
        var owesReady = false
    }
    let transmitQueue = Mutex(TransmitQueue())
    /// How many values `updateValue` takes before it says the queue is full.
    public static let transmitQueueLength = 8

    public convenience init() { self.init(delegate: nil, queue: nil, options: nil) }

    public convenience init(delegate: (any CBPeripheralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    public init(delegate: (any CBPeripheralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        restoreIdentifier = options?[CBPeripheralManagerOptionRestoreIdentifierKey] as? String
        adapter = options?[CBManagerOptionGatewayAdapterKey] as? String
        super.init(queue: queue, options: options)
        self.delegate = delegate
        followTask = Task { [weak self] in await self?.followGateway() }
    }


    func deliver(_ body: @escaping @Sendable (CBPeripheralManager, (any CBPeripheralManagerDelegate)?) -> Void) {
        queue.async { body(self, self.delegate) }
    }

    func perform(_ operation: @escaping @Sendable (GatewayClient) async -> Void) {
        guard let gateway else { return }
        work.enqueue { await operation(gateway) }
    }

    override func reportState() { delegate?.peripheralManagerDidUpdateState(self) }

    private func followGateway() async {
        await follow(
            "/v1/peripheral/events", query: [],
            refresh: { [unowned self] gateway, restoring throws(GatewayError) in
                let info = try await gateway.decode(GatewayJSON.Info.self, "GET", "/v1")
                if restoring { try await restore(gateway) }
                await setState(Self.state(of: info, adapter: adapter))
            },
            handle: { [unowned self] event, gateway in
                if let json = try? event.decode(GatewayJSON.PeripheralEvent.self) { await handle(json, gateway) }
            })
    }

    // MARK: Services

    /// Publishes the service as a gateway application; `didAdd` follows.
    public func add(_ service: CBMutableService) {
        let body = ApplicationRequest(service, adapter: adapter, label: restoreIdentifier)
        perform { gateway in
            let failure: (any Error)?
            do {
                let published = try await gateway.decode(
                    GatewayJSON.PublishedApplication.self, "POST", "/v1/peripheral/applications", json: body)
                await self.onQueue { self.applications.append((service, published.id)) }
                failure = nil
            } catch {
                failure = CBError.from(error)
            }
            self.deliver { manager, delegate in delegate?.peripheralManager(manager, didAdd: service, error: failure) }
        }
    }

    public func remove(_ service: CBMutableService) {
        perform { gateway in
            let ids = await self.onQueue { () -> [String] in
                let ids = self.applications.filter { $0.service === service }.map(\.id)
                self.applications.removeAll { $0.service === service }
                return ids
            }
            for id in ids { _ = try? await gateway.send("DELETE", "/v1/peripheral/applications/\(id)") }
        }
    }

    public func removeAllServices() {
        perform { gateway in
            let ids = await self.onQueue { () -> [String] in
                defer { self.applications = [] }
                return self.applications.map(\.id)
            }
            for id in ids { _ = try? await gateway.send("DELETE", "/v1/peripheral/applications/\(id)") }
        }
    }

    // MARK: Advertising

    /// Advertises `CBAdvertisementDataLocalNameKey` and
    /// `CBAdvertisementDataServiceUUIDsKey` (the keys Core Bluetooth
    /// takes); `peripheralManagerDidStartAdvertising` follows.
    public func startAdvertising(_ advertisementData: [String: Any]?) {
        let body = AdvertisementRequest(
            adapter: adapter, localName: advertisementData?[CBAdvertisementDataLocalNameKey] as? String,
            serviceUuids: (advertisementData?[CBAdvertisementDataServiceUUIDsKey] as? [CBUUID])?.map(\.gatewayString))
        perform { gateway in
            let failure: (any Error)?
            if await self.onQueue({ self.advertisementID != nil }) {
                failure = CBError(.alreadyAdvertising, detail: "stopAdvertising() first")
            } else {
                do {
                    let advertisement = try await gateway.decode(
                        GatewayJSON.PublishedAdvertisement.self, "POST", "/v1/peripheral/advertisements", json: body)
                    await self.onQueue {
                        self.advertisementID = advertisement.id
                        self.isAdvertising = true
                    }
                    failure = nil
                } catch {
                    failure = CBError.from(error)
                }
            }
            self.deliver { manager, delegate in delegate?.peripheralManagerDidStartAdvertising(manager, error: failure) }
        }
    }

    public func stopAdvertising() {
        perform { gateway in
            let id = await self.onQueue { () -> String? in
                defer {
                    self.advertisementID = nil
                    self.isAdvertising = false
                }
                return self.advertisementID
            }
            if let id { _ = try? await gateway.send("DELETE", "/v1/peripheral/advertisements/\(id)") }
        }
    }

    // MARK: Requests and updates

    /// Answers a read (with `request.value`) or a write. An ATT code
    /// bluetoothd cannot send (it sends 0x02, 0x03, 0x06, 0x07, 0x08, 0x0d,
    /// 0x0e and 0x80-0x9f) goes as 0x0e, Unlikely Error.
    public func respond(to request: CBATTRequest, withResult result: CBATTError.Code) {
        let answer: RequestAnswer
        if result == .success {
            answer = RequestAnswer(value: request.isRead ? Hex.encode(request.value ?? Data()) : "", attError: nil)
        } else {
            let sendable: Set<CBATTError.Code> = [
                .readNotPermitted, .writeNotPermitted, .requestNotSupported, .invalidOffset, .insufficientAuthorization,
                .invalidAttributeValueLength, .unlikelyError, .applicationError,
            ]
            answer = RequestAnswer(value: nil, attError: sendable.contains(result) ? result.rawValue : CBATTError.Code.unlikelyError.rawValue)
        }
        perform { gateway in _ = try? await gateway.send("POST", "/v1/peripheral/requests/\(request.id)", json: answer) }
    }

    /// Sends a value to the subscribed centrals (all of them: bluetoothd
    /// notifies every subscriber, so `centrals` cannot narrow it). Returns
    /// false when the transmit queue is full;
    /// `peripheralManagerIsReady(toUpdateSubscribers:)` follows when it has
    /// room again.
    public func updateValue(_ value: Data, for characteristic: CBMutableCharacteristic, onSubscribedCentrals centrals: [CBCentral]?)
        -> Bool
    {
        guard let gateway else { return false }
        let accepted = transmitQueue.withLock { queue -> Bool in
            guard queue.pending < Self.transmitQueueLength else {
                queue.owesReady = true
                return false
            }
            queue.pending += 1
            return true
        }
        guard accepted else { return false }
        transmissions.enqueue {
            let target = await self.onQueue { () -> (String, String)? in
                characteristic.currentValue = value
                guard let service = characteristic.service as? CBMutableService,
                    let id = self.applications.first(where: { $0.service === service })?.id
                else { return nil }
                return (id, service.uuid.gatewayString)
            }
            if let (id, service) = target {
                _ = try? await gateway.send(
                    "PUT", "/v1/peripheral/applications/\(id)/characteristics/\(characteristic.uuid.gatewayString)/value",
                    query: [URLQueryItem(name: "service", value: service)], json: GatewayJSON.Value(hex: Hex.encode(value)))
            }
            let ready = self.transmitQueue.withLock { queue -> Bool in
                queue.pending -= 1
                guard queue.owesReady else { return false }
                queue.owesReady = false
                return true
            }
            if ready { self.deliver { manager, delegate in delegate?.peripheralManagerIsReady(toUpdateSubscribers: manager) } }
        }
        return true
    }

    /// The published characteristic an event names (on the queue).
    func characteristic(_ event: GatewayJSON.PeripheralEvent) -> CBMutableCharacteristic? {
        guard let uuid = event.characteristic.flatMap(CBUUID.init(validating:)) else { return nil }
        let serviceUUID = event.service.flatMap(CBUUID.init(validating:))
        let services = applications.filter { $0.id == event.application || event.application == nil }.map(\.service)
        return services.filter { serviceUUID == nil || $0.uuid == serviceUUID }
            .flatMap { $0.characteristics ?? [] }
            .first { $0.uuid == uuid } as? CBMutableCharacteristic
    }

    /// The central of an event. bluetoothd does not say who subscribed
    /// (StartNotify carries no device): then it is the connected central
    /// when there is one, else a central of unknown address (00:00:00:00:00:00).
    func central(_ address: String?) -> CBCentral {
        let address = address ?? (connectedCentrals.count == 1 ? connectedCentrals[0] : "00:00:00:00:00:00")
        if let known = centrals[address] { return known }
        let central = CBCentral(gateway: gateway?.baseURL ?? URL(fileURLWithPath: "/"), address: address)
        centrals[address] = central
        return central
    }

    private func handle(_ event: GatewayJSON.PeripheralEvent, _ gateway: GatewayClient) async {
        deliver { manager, delegate in
            switch event.type {
            case "central-connected":
                if let address = event.central, !manager.connectedCentrals.contains(address) { manager.connectedCentrals.append(address) }
            case "central-disconnected":
                manager.connectedCentrals.removeAll { $0 == event.central }
            case "request":
                guard let id = event.id, let characteristic = manager.characteristic(event) else { return }
                let request = CBATTRequest(
                    id: id, isRead: event.kind == "read", central: manager.central(event.central), characteristic: characteristic,
                    offset: event.offset ?? 0, value: event.value.flatMap(Hex.decode))
                if request.isRead {
                    delegate?.peripheralManager(manager, didReceiveRead: request)
                } else {
                    delegate?.peripheralManager(manager, didReceiveWrite: [request])
                }
            case "subscribed":
                guard let characteristic = manager.characteristic(event) else { return }
                let central = manager.central(event.central)
                characteristic.isNotifying = true
                if !(characteristic.subscribedCentrals ?? []).contains(central) { characteristic.subscribedCentrals?.append(central) }
                delegate?.peripheralManager(manager, central: central, didSubscribeTo: characteristic)
            case "unsubscribed":
                guard let characteristic = manager.characteristic(event) else { return }
                let central = manager.central(event.central)
                characteristic.isNotifying = false
                characteristic.subscribedCentrals?.removeAll { $0 === central }
                delegate?.peripheralManager(manager, central: central, didUnsubscribeFrom: characteristic)
            default:
                break
            }
        }
    }
}

struct RequestAnswer: Encodable, Sendable {
    var value: String?
    var attError: Int?
}

struct AdvertisementRequest: Encodable, Sendable {
    var adapter: String?
    var localName: String?
    var serviceUuids: [String]?
}
