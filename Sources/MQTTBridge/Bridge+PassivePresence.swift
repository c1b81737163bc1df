import BlueZ
import GatewayAPI

// `--mqtt-presence passive`: presence from a passive scan the bridge holds,
// so that the fleet knows who hears whom without any client scanning.

extension Bridge {
    /// Holds the passive scan on the gateway's default adapter and publishes
    /// presence from it (thinned as any presence is: `PresenceTracker`);
    /// opened again 5 s after it fails or ends (bluetoothd away, the
    /// adapter off), until the bridge stops.
    func listenForPresence() -> Task<Void, Never> {
        let central = gateway.central
        let adapter = gateway.configuration.defaultAdapter
        return Task { [weak self] in
            // Every report: the tracker, not the session, thins them.
            let filter = DiscoveryFilter(allowDuplicates: true)
            let mode = ScanMode.passive(patterns: PresenceSource.anyFlags, fallback: PresenceSource.passiveFallback)
            while !Task.isCancelled {
                do {
                    let session = try await central.scan(adapter: adapter, filter: filter, mode: mode)
                    for await event in session {
                        guard let self else { return }
                        switch event {
                        case .discovered(let device), .updated(let device):
                            if let rssi = device.advertisement.rssi {
                                self.publishPresence(device: device.address.description, adapter: device.adapter, rssi: Int(rssi))
                            }
                        case .lost(let device), .silent(let device):
                            self.clearPresence(device: device.address.description)
                        case .interrupted, .resumed:
                            continue
                        }
                    }
                } catch {
                    self?.floodLog.note("the passive presence scan could not start: \(error)")
                }
                try? await Task.sleep(for: .seconds(5))
            }
        }
    }
}
