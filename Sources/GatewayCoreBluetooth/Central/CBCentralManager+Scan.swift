import Foundation

extension CBCentralManager {
    /// Scans for peripherals advertising one of `serviceUUIDs` (any, when
    /// nil): the gateway's scan stream (through a fleet, what the fleet's
    /// gateways publish), open until `stopScan()`. Each peripheral is
    /// reported once, or at every advertisement with
    /// `CBCentralManagerScanOptionAllowDuplicatesKey`.
    public func scanForPeripherals(withServices serviceUUIDs: [CBUUID]?, options: [String: Any]? = nil) {
        guard let gateway else { return }
        let duplicates = (options?[CBCentralManagerScanOptionAllowDuplicatesKey] as? Bool) ?? false
        queue.async {
            self.scanStream?.close()
            self.scanStream = nil
            self.isScanning = true
        }
        Task {
            let reports: ScanReports
            do {
                reports = try await ScanReports.open(
                    gateway, fleet: fleet, adapterQuery: adapterQuery, services: serviceUUIDs, duplicates: duplicates)
            } catch {
                await onQueue {
                    self.isScanning = false
                    self.lastGatewayError = error as? GatewayError
                }
                return
            }
            let stream = reports.stream
            let current = await onQueue { () -> Bool in
                guard self.isScanning, self.scanStream == nil else { return false }
                self.scanStream = stream
                return true
            }
            guard current else {
                stream.close()
                return
            }
            do {
                for try await event in stream {
                    if let device = reports.device(in: event) { self.discovered(device) }
                }
            } catch {}
            queue.async {
                guard self.scanStream === stream else { return }
                self.scanStream = nil
                self.isScanning = false
            }
        }
    }

    public func stopScan() {
        queue.async {
            self.scanStream?.close()
            self.scanStream = nil
            self.isScanning = false
        }
    }

    private func discovered(_ device: GatewayJSON.Device) {
        let peripheral = peripheral(device.address, device: device)
        let rssi = device.rssi ?? 127
        deliver { manager, delegate in
            guard manager.isScanning else { return }
            let name = device.name ?? device.alias
            let renamed = name != nil && name != peripheral.name
            if renamed { peripheral.name = name }
            if renamed { peripheral.delegate?.peripheralDidUpdateName(peripheral) }
            delegate?.centralManager(
                manager, didDiscover: peripheral, advertisementData: Self.advertisementData(device), rssi: NSNumber(value: rssi))
        }
    }

    /// The advertisement as Core Bluetooth's dictionary: manufacturer data
    /// with its company id first (little-endian), service data by `CBUUID`.
    static func advertisementData(_ device: GatewayJSON.Device) -> [String: Any] {
        var data: [String: Any] = [:]
        if let name = device.name { data[CBAdvertisementDataLocalNameKey] = name }
        if let power = device.txPower { data[CBAdvertisementDataTxPowerLevelKey] = NSNumber(value: power) }
        let services = (device.serviceUuids ?? []).compactMap(CBUUID.init(validating:))
        if !services.isEmpty { data[CBAdvertisementDataServiceUUIDsKey] = services }
        if let manufacturer = device.manufacturerData?.values.sorted(by: { $0.companyId < $1.companyId }).first,
            let value = Hex.decode(manufacturer.value)
        {
            data[CBAdvertisementDataManufacturerDataKey] =
                Data([UInt8(manufacturer.companyId & 0xff), UInt8(manufacturer.companyId >> 8)]) + value
        }
        var serviceData: [CBUUID: Data] = [:]
        for entry in device.serviceData?.values ?? [:].values {
            if let uuid = CBUUID(validating: entry.uuid), let value = Hex.decode(entry.value) { serviceData[uuid] = value }
        }
        if !serviceData.isEmpty { data[CBAdvertisementDataServiceDataKey] = serviceData }
        return data
    }
}
