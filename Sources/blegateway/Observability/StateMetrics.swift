import BlueZ
import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MQTT
import Metrics
import PersistedState
import Synchronization

/// Gauges of the state of what the gateway depends on, read when metrics
/// are scraped (nothing on the paths that change them):
///
/// - `blegateway_dbus_connected`, `blegateway_bluez_available`,
///   `blegateway_adapter_powered{adapter}`: the links to Bluetooth;
/// - `blegateway_adapter_connection_slots_used{adapter}`, `..._free`,
///   `..._queued_connections`: each adapter's connection slots, and the
///   connections waiting for one it could serve;
/// - with `--mqtt`: `blegateway_mqtt_connected`, `..._queued_messages`,
///   `..._in_flight_messages`, `..._published_messages_total`,
///   `..._dropped_messages_total`;
/// - with a state store: `blegateway_store_lag_events`, `..._events`,
///   `..._size_bytes`, `..._lost_events_total`.
final class StateMetrics: Sendable {
    private let central: Central
    private let mqtt: Client?
    private let store: Store?

    private let busConnected = Gauge(label: "blegateway_dbus_connected")
    private let bluezAvailable = Gauge(label: "blegateway_bluez_available")
    /// The adapters seen so far: one that goes away reads 0, not its last value.
    private let adapters = Mutex<[String: Gauge]>([:])
    /// Slots used and free, and connections queued, per adapter seen so
    /// far (one that goes away reads 0).
    private let slots = Mutex<[String: (used: Gauge, free: Gauge, queued: Gauge)]>([:])
    private let mqttGauges: (connected: Gauge, queued: Gauge, inFlight: Gauge)?
    private let mqttCounters: (published: CounterMirror, dropped: CounterMirror)?
    private let storeGauges: (lag: Gauge, events: Gauge, size: Gauge)?
    private let storeLost: CounterMirror?

    init(central: Central, mqtt: Client?, store: Store?) {
        self.central = central
        self.mqtt = mqtt
        self.store = store
        mqttGauges = mqtt.map { _ in
            (
                Gauge(label: "blegateway_mqtt_connected"), Gauge(label: "blegateway_mqtt_queued_messages"),
                Gauge(label: "blegateway_mqtt_in_flight_messages")
            )
        }
        mqttCounters = mqtt.map { _ in
            (CounterMirror("blegateway_mqtt_published_messages_total"), CounterMirror("blegateway_mqtt_dropped_messages_total"))
        }
        storeGauges = store.map { _ in
            (
                Gauge(label: "blegateway_store_lag_events"), Gauge(label: "blegateway_store_events"),
                Gauge(label: "blegateway_store_size_bytes")
            )
        }
        storeLost = store.map { _ in CounterMirror("blegateway_store_lost_events_total") }
        update()
    }

    func update() {
        let availability = central.availability
        if case .busDisconnected = availability { busConnected.record(0) } else { busConnected.record(1) }
        bluezAvailable.record(availability == .available ? 1 : 0)
        let powered = Dictionary(central.adapters().map { ($0.id, $0.state == .poweredOn) }) { first, _ in first }
        adapters.withLock { gauges in
            for id in powered.keys where gauges[id] == nil {
                gauges[id] = Gauge(label: "blegateway_adapter_powered", dimensions: [("adapter", id)])
            }
            for (id, gauge) in gauges { gauge.record(powered[id] == true ? 1 : 0) }
        }
        let usage = Dictionary(central.connectionSlots().map { ($0.adapter, $0) }) { first, _ in first }
        slots.withLock { gauges in
            for id in usage.keys where gauges[id] == nil {
                gauges[id] = (
                    Gauge(label: "blegateway_adapter_connection_slots_used", dimensions: [("adapter", id)]),
                    Gauge(label: "blegateway_adapter_connection_slots_free", dimensions: [("adapter", id)]),
                    Gauge(label: "blegateway_adapter_queued_connections", dimensions: [("adapter", id)])
                )
            }
            for (id, gauge) in gauges {
                gauge.used.record(usage[id]?.used ?? 0)
                gauge.free.record(usage[id]?.free ?? 0)
                gauge.queued.record(usage[id]?.queued ?? 0)
            }
        }
        if let mqtt, let mqttGauges, let mqttCounters {
            let statistics = mqtt.statistics
            if case .connected = mqtt.connectionState { mqttGauges.connected.record(1) } else { mqttGauges.connected.record(0) }
            mqttGauges.queued.record(statistics.queued)
            mqttGauges.inFlight.record(statistics.inFlight)
            mqttCounters.published.set(statistics.published)
            mqttCounters.dropped.set(statistics.droppedFromOutbox + statistics.droppedWhileDisconnected)
        }
        if let store, let storeGauges, let storeLost {
            let statistics = store.statistics
            storeGauges.lag.record(Int(clamping: statistics.appended &- statistics.committed &- statistics.lost))
            storeGauges.events.record(store.eventLogSummary.count)
            storeGauges.size.record(Self.fileSize(store.path) + Self.fileSize(store.path + "-wal"))
            storeLost.set(Int(clamping: statistics.lost))
        }
    }

    private static func fileSize(_ path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }
}
