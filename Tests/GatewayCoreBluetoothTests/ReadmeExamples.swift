// The examples of README.md's "From Swift (Core Bluetooth)", compiled here
// so that they cannot rot; ReadmeExampleTests checks that README.md shows
// each block between the markers verbatim.

// readme:central
import GatewayCoreBluetooth  // on Apple's platforms: import CoreBluetooth

final class HeartRateMonitor: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate {
    let heartRate = CBUUID(string: "180D")
    var centralManager: CBCentralManager!
    var strap: CBPeripheral?

    override init() {
        super.init()
        centralManager = CBCentralManager(delegate: self, queue: DispatchQueue(label: "heart-rate"))
    }

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        guard central.state == .poweredOn else { return }
        central.scanForPeripherals(withServices: [heartRate])
    }

    func centralManager(
        _ central: CBCentralManager, didDiscover peripheral: CBPeripheral,
        advertisementData: [String: Any], rssi RSSI: NSNumber
    ) {
        print("found", advertisementData[CBAdvertisementDataLocalNameKey] ?? "?", RSSI)
        strap = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        peripheral.discoverServices([heartRate])
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: Error?) {
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid.uuidString {
            case "2A37": peripheral.setNotifyValue(true, for: characteristic)
            case "2A38": peripheral.readValue(for: characteristic)
            case "2A39": peripheral.writeValue(Data([0x01]), for: characteristic, type: .withResponse)
            default: break
            }
        }
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: Error?) {
        print(characteristic.uuid, characteristic.value.map { Array($0) } ?? [], error ?? "")
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: Error?) {
        if let error = error as? CBATTError { print("refused:", error.code) }
    }
}
// readme:end

// readme:peripheral
final class Thermometer: NSObject, CBPeripheralManagerDelegate {
    var manager: CBPeripheralManager!
    let temperature = CBMutableCharacteristic(
        type: CBUUID(string: "2A6E"), properties: [.read, .notify], value: nil, permissions: [.readable])

    override init() {
        super.init()
        manager = CBPeripheralManager(delegate: self, queue: DispatchQueue(label: "thermometer"))
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMutableService(type: CBUUID(string: "181A"), primary: true)
        service.characteristics = [temperature]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: Error?) {
        peripheral.startAdvertising([
            CBAdvertisementDataLocalNameKey: "thermo", CBAdvertisementDataServiceUUIDsKey: [service.uuid],
        ])
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
        request.value = Data([0x34, 0x08])  // 21.00 °C
        peripheral.respond(to: request, withResult: .success)
    }

    func peripheralManager(
        _ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic
    ) {
        _ = peripheral.updateValue(Data([0x98, 0x08]), for: temperature, onSubscribedCentrals: nil)
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        // updateValue returned false: the queue has room again.
    }
}
// readme:end

// readme:async
func strapLocation(_ central: CBCentralManager) async throws -> Data? {
    try await central.poweredOn()
    for try await found in try await central.discoveries(withServices: [CBUUID(string: "180D")]) {
        try await central.connect(to: found.peripheral)
        let services = try await found.peripheral.discoverAll()
        let characteristics = services.flatMap { $0.characteristics ?? [] }
        guard let location = characteristics.first(where: { $0.uuid == CBUUID(string: "2A38") }) else { return nil }
        return try await found.peripheral.value(of: location)
    }
    return nil
}
// readme:end
