import Foundation
import GatewayCoreBluetooth

/// The seeds' peripheral, as it is written for iOS: publish a service,
/// advertise it, answer reads and writes, update subscribers.
final class Thermometer: NSObject, CBPeripheralManagerDelegate, @unchecked Sendable {
    enum Entry: Sendable, Equatable {
        case state(CBManagerState)
        case added(String, error: String?)
        case advertising(error: String?)
        case read(String, offset: Int)
        case write(String, Data)
        case subscribed(String, central: String)
        case unsubscribed(String)
        case ready
        case restored([String])
        case wrongQueue
    }

    static let service = CBUUID(string: "180D")
    static let measurement = CBUUID(string: "2A37")
    static let location = CBUUID(string: "2A38")
    static let secret = CBUUID(string: "FF01")

    let log = Recorded<Entry>()
    let callbacks: CallbackQueue
    var peripheralManager: CBPeripheralManager!
    let measurement = CBMutableCharacteristic(type: measurement, properties: [.notify], value: nil, permissions: [.readable])
    /// What a read of the secret answers; a write of 00 is refused.
    let secretValue = Data([0xca, 0xfe])
    var restoredServices: [CBMutableService] = []

    init(gateway: String, queue: CallbackQueue, restoreIdentifier: String? = nil) {
        callbacks = queue
        super.init()
        var options: [String: Any] = [CBManagerOptionGatewayURLKey: gateway]
        if let restoreIdentifier { options[CBPeripheralManagerOptionRestoreIdentifierKey] = restoreIdentifier }
        peripheralManager = CBPeripheralManager(delegate: self, queue: queue.queue, options: options)
    }

    private func record(_ entry: Entry) {
        if !callbacks.isCurrent { log.append(.wrongQueue) }
        log.append(entry)
    }

    func publish() {
        let service = CBMutableService(type: Self.service, primary: true)
        let location = CBMutableCharacteristic(type: Self.location, properties: [.read], value: Data([0x01]), permissions: [.readable])
        let secret = CBMutableCharacteristic(
            type: Self.secret, properties: [.read, .write], value: nil, permissions: [.readable, .writeable])
        secret.descriptors = [CBMutableDescriptor(type: CBUUID(string: CBUUIDCharacteristicUserDescriptionString), value: "secret")]
        service.characteristics = [measurement, location, secret]
        peripheralManager.add(service)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        record(.state(peripheral.state))
        if peripheral.state == .poweredOn, restoredServices.isEmpty { publish() }
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, willRestoreState dict: [String: Any]) {
        restoredServices = dict[CBPeripheralManagerRestoredStateServicesKey] as? [CBMutableService] ?? []
        record(.restored(restoredServices.map(\.uuid.uuidString)))
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?) {
        record(.added(service.uuid.uuidString, error: error.map { "\($0)" }))
        peripheral.startAdvertising([CBAdvertisementDataLocalNameKey: "Thermo", CBAdvertisementDataServiceUUIDsKey: [service.uuid]])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?) {
        record(.advertising(error: error.map { "\($0)" }))
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
        record(.read(request.characteristic.uuid.uuidString, offset: request.offset))
        request.value = secretValue.subdata(in: min(request.offset, secretValue.count)..<secretValue.count)
        peripheral.respond(to: request, withResult: .success)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
        guard let first = requests.first else { return }
        for request in requests { record(.write(request.characteristic.uuid.uuidString, request.value ?? Data())) }
        peripheral.respond(to: first, withResult: first.value == Data([0x00]) ? .writeNotPermitted : .success)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic) {
        record(.subscribed(characteristic.uuid.uuidString, central: central.address))
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic) {
        record(.unsubscribed(characteristic.uuid.uuidString))
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        record(.ready)
    }
}

extension Thermometer.Entry {
    var isAdded: Bool { if case .added = self { true } else { false } }
    var isSubscribed: Bool { if case .subscribed = self { true } else { false } }
}
