import BlueZ
import Metrics

/// Gauges of what the central is doing, set from `Central.activity` each
/// time `/metrics` is read (a reading costs one pass over the central's
/// records, nothing on the paths that change them):
///
/// - `blegateway_devices_connected`: devices bluetoothd reports connected;
/// - `blegateway_devices_connected_by_gateway`: of those, the ones the
///   gateway connected (and disconnects when it stops);
/// - `blegateway_scan_sessions`: discovery sessions open (scan streams and
///   timed scans);
/// - `blegateway_subscriptions`: characteristics subscribed to (StartNotify
///   in place), however many streams share each;
/// - `blegateway_subscribers`: the streams sharing them.
struct ActivityGauges: Sendable {
    private let connected = Gauge(label: "blegateway_devices_connected")
    private let connectedByGateway = Gauge(label: "blegateway_devices_connected_by_gateway")
    private let scanSessions = Gauge(label: "blegateway_scan_sessions")
    private let subscriptions = Gauge(label: "blegateway_subscriptions")
    private let subscribers = Gauge(label: "blegateway_subscribers")

    init() {
        // Every kind of stream is listed from the start, open or not.
        for kind in StreamKind.allCases { _ = kind.openGauge }
    }

    func record(_ activity: CentralActivity) {
        connected.record(activity.connectedDevices)
        connectedByGateway.record(activity.connectedByCentral)
        scanSessions.record(activity.scanSessions)
        subscriptions.record(activity.subscriptions)
        subscribers.record(activity.subscribers)
    }
}
