import BlueZ
import GatewayAPI
import MQTT

// Connection slots across the fleet (docs/fleet.md, "Connection slots"):
// each gateway publishes its adapters' slots on `<prefix>/<id>/slots`,
// retained, whenever they change, so that the choice of a fleet-kept
// device's holder passes over a gateway with none free (rather than handing
// the device to it, and back, over and over), and `/v1/fleet/gateways`
// shows them.
extension Bridge {
    /// Publishes this gateway's slots when they differ from what it last
    /// published on this broker connection (every tick; a connect or a
    /// disconnect changes them).
    func publishSlotsIfChanged() {
        guard configuration.fleet, client.connectionState.isConnected else { return }
        let slots = poweredSlots()
        let changed = fleetKeeps.withLock { keeping -> Bool in
            guard keeping.publishedSlots != slots else { return false }
            keeping.publishedSlots = slots
            return true
        }
        guard changed else { return }
        let payload = JSON.object([
            ("gateway", .string(configuration.gatewayID)),
            ("adapters", .array(slots.map { $0.json(named: true) })),
        ])
        do {
            try client.publish(topics.slots, payload: payload.bytes, qos: .atLeastOnce, retain: true, properties: Self.json)
        } catch {
            // Sent again on the next tick.
            fleetKeeps.withLock { $0.publishedSlots = nil }
        }
    }

    /// The slots of the powered adapters: one that is off offers none (it
    /// cannot connect anything until it is on again).
    func poweredSlots() -> [AdapterSlots] {
        gateway.central.connectionSlots().filter { gateway.central.adapterState($0.adapter) == .poweredOn }
    }

    /// A new broker connection: the slots are published again (the broker
    /// may have lost the retained message).
    func forgetPublishedSlots() {
        fleetKeeps.withLock { $0.publishedSlots = nil }
    }

    /// Another gateway's (or this one's) slots, as it published them; an
    /// empty payload clears them.
    func receiveSlots(_ message: Message) {
        guard let gateway = Self.level(1, of: message.topic) else { return }
        let adapters = (try? Self.object(message.payload)["adapters"].array()) ?? []
        let slots = adapters.compactMap { adapter -> AdapterSlots? in
            guard let name = (try? adapter["adapter"].string(maxLength: 64)) ?? nil,
                let limit = (try? adapter["limit"].int(in: 0...1_000_000)) ?? nil,
                let used = (try? adapter["used"].int(in: 0...1_000_000)) ?? nil
            else { return nil }
            let queued = ((try? adapter["queued"].int(in: 0...1_000_000)) ?? nil) ?? 0
            return AdapterSlots(adapter: name, limit: limit, used: used, queued: queued)
        }
        directory.withLock { $0.setSlots(gateway, message.payload.isEmpty ? nil : slots) }
    }
}
