import Foundation

extension CBCentralManager {
    /// Gives the delegate what the gateway kept for this restore
    /// identifier: the peripherals it keeps connected (`connected` or
    /// `connecting`), with the services and notifying characteristics of
    /// their standing subscriptions. The scan is not restored: the gateway
    /// scans only while a client holds a scan stream.
    func restore(_ gateway: GatewayClient) async throws(GatewayError) {
        guard let restoreIdentifier else { return }
        let kept = try await gateway.decode([GatewayJSON.KeptConnection].self, "GET", "/v1/kept-connections")
        var restored: [CBPeripheral] = []
        for connection in kept where connection.label == restoreIdentifier {
            let device = registry.withLock { $0.devices[connection.address] }
            let peripheral = peripheral(connection.address, device: device, adapter: connection.adapter)
            let connected = connection.status == "connected"
            await onQueue { peripheral.state = connected ? .connected : .connecting }
            if connected { await resumeStandingSubscriptions(peripheral, gateway) }
            restored.append(peripheral)
        }
        guard !restored.isEmpty else { return }
        let peripherals = restored
        await onQueue {
            self.delegate?.centralManager(self, willRestoreState: [CBCentralManagerRestoredStatePeripheralsKey: peripherals])
        }
    }

    /// Opens the notification streams of the peripheral's standing
    /// subscriptions, with its services discovered as far as they lead.
    func resumeStandingSubscriptions(_ peripheral: CBPeripheral, _ gateway: GatewayClient) async {
        guard let standing = try? await gateway.decode([GatewayJSON.StandingSubscription].self, "GET", "/v1/subscriptions"),
            standing.contains(where: { $0.device == peripheral.address }),
            case .success(let services) = await peripheral.fetchServices(gateway)
        else { return }
        for subscription in standing where subscription.device == peripheral.address {
            let uuid = CBUUID(validating: subscription.characteristic)
            let serviceUUID = subscription.service.flatMap(CBUUID.init(validating:))
            guard
                let service = services.first(where: { service in
                    (serviceUUID.map { $0 == service.uuid } ?? true) && service.knownCharacteristics.contains { $0.uuid == uuid }
                }),
                let characteristic = service.knownCharacteristics.first(where: { $0.uuid == uuid })
            else { continue }
            let open = await peripheral.onQueue { () -> Bool in
                peripheral.services = services
                service.discoveredCharacteristics = service.knownCharacteristics
                return peripheral.notificationStreams[ObjectIdentifier(characteristic)] != nil
            }
            if !open { _ = try? await peripheral.openStream(characteristic, gateway) }
        }
    }
}
