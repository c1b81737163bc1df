import Foundation

extension CBPeripheralManager {
    /// Gives the delegate the services the gateway publishes under this
    /// restore identifier (stored applications, which the gateway
    /// publishes again after its own restarts), as new `CBMutableService`
    /// objects with their characteristics and current values.
    func restore(_ gateway: GatewayClient) async throws(GatewayError) {
        guard let restoreIdentifier else { return }
        let published = try await gateway.decode([GatewayJSON.PublishedApplication].self, "GET", "/v1/peripheral/applications")
        let mine = published.filter { $0.label == restoreIdentifier }
        guard !mine.isEmpty else { return }
        await onQueue {
            var services: [CBMutableService] = []
            for application in mine {
                for json in application.services {
                    guard let uuid = CBUUID(validating: json.uuid) else { continue }
                    let service = CBMutableService(type: uuid, primary: json.primary)
                    service.characteristics = json.characteristics.compactMap { json in
                        guard let uuid = CBUUID(validating: json.uuid) else { return nil }
                        let characteristic = CBMutableCharacteristic(
                            type: uuid, properties: CBCharacteristicProperties(bluezFlags: json.flags),
                            value: json.delegate ? nil : Hex.decode(json.value), permissions: Self.permissions(json.flags))
                        characteristic.service = service
                        characteristic.isNotifying = json.notifying
                        return characteristic
                    }
                    self.applications.append((service, application.id))
                    services.append(service)
                }
            }
            self.delegate?.peripheralManager(self, willRestoreState: [CBPeripheralManagerRestoredStateServicesKey: services])
        }
    }

    static func permissions(_ flags: [String]) -> CBAttributePermissions {
        var permissions: CBAttributePermissions = []
        if flags.contains("read") { permissions.insert(.readable) }
        if flags.contains("write") || flags.contains("write-without-response") { permissions.insert(.writeable) }
        if flags.contains("encrypt-read") { permissions.insert(.readEncryptionRequired) }
        if flags.contains("encrypt-write") { permissions.insert(.writeEncryptionRequired) }
        return permissions
    }
}
