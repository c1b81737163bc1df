#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import GatewayAPI

/// The fleet as `/v1/fleet/gateways` and `/v1/fleet/devices` show it, built
/// from what the gateways publish on the broker (status, presence,
/// connection and keep topics). Unlike `FleetView`, which only ranks
/// gateways for claims, it keeps what a person asks about: when each gateway
/// was last heard from, each hearing's adapter and smoothed RSSI, and who
/// keeps each device.
struct FleetDirectory {
    /// How much a new RSSI weighs in the moving average: an exponential
    /// moving average over the presences a gateway publishes (themselves
    /// thinned to a change of 6 dB or a 20 s refresh).
    static let averageWeight = 0.25

    struct Hearing {
        var adapter: String?
        var rssi: Int
        var average: Double
        var lastSeen: Date
    }

    struct Keeping {
        var adapter: String?
        var status: String?
    }

    /// Presence published longer ago than this is shown as not fresh.
    let presenceFreshness: Duration

    private var online: [String: Bool] = [:]
    private var lastSeen: [String: Date] = [:]
    private var hearing: [String: [String: Hearing]] = [:]
    private var connected: [String: Set<String>] = [:]
    private var kept: [String: [String: Keeping]] = [:]
    /// Each gateway's connection slots, as it last published them.
    private var slots: [String: [AdapterSlots]] = [:]

    init(presenceFreshness: Duration) {
        self.presenceFreshness = presenceFreshness
    }

    /// `gateway` spoke at `date` (a retained message's own timestamp, or
    /// when a live one arrived).
    mutating func seen(_ gateway: String, at date: Date) {
        if let last = lastSeen[gateway], last >= date { return }
        lastSeen[gateway] = date
    }

    mutating func setStatus(_ gateway: String, online isOnline: Bool) {
        online[gateway] = isOnline
    }

    /// nil `rssi`: the presence was cleared.
    mutating func setPresence(_ gateway: String, device: String, adapter: String?, rssi: Int?, at date: Date) {
        guard let rssi else {
            hearing[device]?[gateway] = nil
            if hearing[device]?.isEmpty == true { hearing[device] = nil }
            return
        }
        var entry = hearing[device]?[gateway] ?? Hearing(adapter: adapter, rssi: rssi, average: Double(rssi), lastSeen: date)
        entry.average += (Double(rssi) - entry.average) * Self.averageWeight
        entry.rssi = rssi
        entry.adapter = adapter ?? entry.adapter
        entry.lastSeen = date
        hearing[device, default: [:]][gateway] = entry
    }

    mutating func setConnected(_ gateway: String, device: String, _ isConnected: Bool) {
        if isConnected {
            connected[device, default: []].insert(gateway)
        } else {
            connected[device]?.remove(gateway)
            if connected[device]?.isEmpty == true { connected[device] = nil }
        }
    }

    /// nil: the gateway no longer keeps the device.
    mutating func setKept(_ gateway: String, device: String, _ keeping: Keeping?) {
        if let keeping {
            kept[device, default: [:]][gateway] = keeping
        } else {
            kept[device]?[gateway] = nil
            if kept[device]?.isEmpty == true { kept[device] = nil }
        }
    }

    /// nil: the gateway's slots topic was cleared.
    mutating func setSlots(_ gateway: String, _ adapters: [AdapterSlots]?) {
        slots[gateway] = adapters
    }

    /// Whether `gateway` published slots and has none free (on `adapter`,
    /// when one is named). A gateway that never published is not counted
    /// full: the others cannot know.
    func hasNoFreeSlot(_ gateway: String, adapter: String?) -> Bool {
        guard let adapters = slots[gateway] else { return false }
        return !adapters.contains { slots in slots.free > 0 && (adapter.map { $0 == slots.adapter } ?? true) }
    }

    func gateways(me: String, now: Date) -> [FleetGateway] {
        let ids = Set(online.keys).union(lastSeen.keys)
        return ids.sorted().map { id in
            FleetGateway(
                id: id, online: online[id] ?? false, lastSeen: lastSeen[id],
                devicesHeard: hearing.values.filter { $0[id].map { isFresh($0, now: now) } ?? false }.count,
                devicesConnected: connected.values.filter { $0.contains(id) }.count,
                devicesKept: kept.values.filter { $0[id] != nil }.count, connectionSlots: slots[id], isSelf: id == me)
        }
    }

    func devices(now: Date) -> [FleetDevice] {
        let addresses = Set(hearing.keys).union(connected.keys).union(kept.keys)
        return addresses.sorted().map { address in
            let heard = (hearing[address] ?? [:]).sorted { ($0.value.average, $1.key) > ($1.value.average, $0.key) }
            return FleetDevice(
                address: address,
                heardBy: heard.map { gateway, entry in
                    FleetDevice.Hearing(
                        gateway: gateway, adapter: entry.adapter, rssi: entry.rssi, rssiAverage: entry.average,
                        lastSeen: entry.lastSeen, fresh: isFresh(entry, now: now))
                },
                connectedOn: (connected[address] ?? []).sorted(),
                keptBy: (kept[address] ?? [:]).sorted { $0.key < $1.key }.map { gateway, keeping in
                    FleetDevice.Keeping(gateway: gateway, adapter: keeping.adapter, status: keeping.status)
                })
        }
    }

    /// The hearings of a device, for choosing who holds it: every presence
    /// not cleared, fresh or not. A presence is published again only when
    /// an advertisement changes the RSSI BlueZ reports (bluetoothd itself
    /// reports a change only past a threshold), so a device that sits
    /// still is heard with no new presence for minutes; its gateway clears
    /// the presence when bluetoothd loses the device, or when it stops.
    func hearings(of device: String) -> [OwnerChoice.Hearing] {
        (hearing[device] ?? [:]).map { OwnerChoice.Hearing(gateway: $0.key, average: $0.value.average) }
    }

    /// Whether `gateway`'s retained `connection` topic says it has `device`
    /// connected.
    func isConnected(_ gateway: String, device: String) -> Bool {
        connected[device]?.contains(gateway) == true
    }

    /// Whether `gateway`'s status says `offline` (its Will, or a clean stop).
    func isOffline(_ gateway: String) -> Bool {
        online[gateway] == false
    }

    private func isFresh(_ entry: Hearing, now: Date) -> Bool {
        now.timeIntervalSince(entry.lastSeen) < Double(presenceFreshness.components.seconds)
    }
}
