import Foundation
import GatewayCoreBluetooth

/// The seeds' central, as it is written for iOS: scan for heart-rate
/// monitors, connect to the first, discover, read the sensor location,
/// follow the measurements, write the control point. Everything it is
/// told goes to `log`.
final class HeartRateMonitor: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate, @unchecked Sendable {
    enum Entry: Sendable, Equatable {
        case state(CBManagerState)
        case discovered(address: String, name: String?, services: [String], manufacturer: Data?, rssi: Int)
        case connected(String)
        case failed(String)
        case disconnected(String, error: String?)
        case services([String])
        case characteristics(String, [String])
        case value(String, Data)
        case notifying(String, Bool, error: String?)
        case written(String, error: String?, attCode: Int?)
        case restored([String])
        case wrongQueue
    }

    static let heartRate = CBUUID(string: "180D")
    static let measurement = CBUUID(string: "2A37")
    static let location = CBUUID(string: "2A38")
    static let controlPoint = CBUUID(string: "2A39")

    let log = Recorded<Entry>()
    let callbacks: CallbackQueue
    var centralManager: CBCentralManager!
    var heartRatePeripheral: CBPeripheral?
    /// The control point values to write once discovered.
    let writes: [Data]

    init(
        gateway: String, queue: CallbackQueue, restoreIdentifier: String? = nil, writes: [Data] = [Data([0x01]), Data([0x02])],
        fleet: Bool = false
    ) {
        callbacks = queue
        self.writes = writes
        super.init()
        var options: [String: Any] = [CBManagerOptionGatewayURLKey: gateway]
        if let restoreIdentifier { options[CBCentralManagerOptionRestoreIdentifierKey] = restoreIdentifier }
        if fleet { options[CBManagerOptionGatewayFleetKey] = true }
        centralManager = CBCentralManager(delegate: self, queue: queue.queue, options: options)
    }

    private func record(_ entry: Entry) {
        if !callbacks.isCurrent { log.append(.wrongQueue) }
        log.append(entry)
    }

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        record(.state(central.state))
        if central.state == .poweredOn, heartRatePeripheral == nil {
            central.scanForPeripherals(withServices: [Self.heartRate])
        }
    }

    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {
        let peripherals = dict[CBCentralManagerRestoredStatePeripheralsKey] as? [CBPeripheral] ?? []
        record(.restored(peripherals.map(\.address)))
        heartRatePeripheral = peripherals.first
        heartRatePeripheral?.delegate = self
    }

    func centralManager(
        _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber
    ) {
        record(
            .discovered(
                address: peripheral.address, name: advertisementData[CBAdvertisementDataLocalNameKey] as? String,
                services: (advertisementData[CBAdvertisementDataServiceUUIDsKey] as? [CBUUID] ?? []).map(\.uuidString),
                manufacturer: advertisementData[CBAdvertisementDataManufacturerDataKey] as? Data, rssi: RSSI.intValue))
        guard heartRatePeripheral == nil else { return }
        heartRatePeripheral = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        record(.connected(peripheral.address))
        peripheral.discoverServices([Self.heartRate])
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        record(.failed("\(error.map { "\($0)" } ?? "")"))
    }

    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?) {
        record(.disconnected(peripheral.address, error: error.map { "\($0)" }))
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
        record(.services((peripheral.services ?? []).map(\.uuid.uuidString)))
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {
        record(.characteristics(service.uuid.uuidString, (service.characteristics ?? []).map(\.uuid.uuidString)))
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid {
            case Self.location: peripheral.readValue(for: characteristic)
            case Self.measurement: peripheral.setNotifyValue(true, for: characteristic)
            case Self.controlPoint:
                for value in writes { peripheral.writeValue(value, for: characteristic, type: .withResponse) }
            default: break
            }
        }
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        if let value = characteristic.value { record(.value(characteristic.uuid.uuidString, value)) }
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {
        record(.notifying(characteristic.uuid.uuidString, characteristic.isNotifying, error: error.map { "\($0)" }))
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        record(
            .written(
                characteristic.uuid.uuidString, error: error.map { "\($0)" }, attCode: (error as? CBATTError)?.rawCode))
    }
}

extension HeartRateMonitor.Entry {
    var isState: Bool { if case .state = self { true } else { false } }
    var isDiscovered: Bool { if case .discovered = self { true } else { false } }
    var isRestored: Bool { if case .restored = self { true } else { false } }
    var isWritten: Bool { if case .written = self { true } else { false } }
}

extension [HeartRateMonitor.Entry] {
    func values(of uuid: String) -> [Data] {
        compactMap { entry in
            if case .value(uuid, let value) = entry { return value }
            return nil
        }
    }
}
