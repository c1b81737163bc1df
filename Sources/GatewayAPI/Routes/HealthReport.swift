import BlueZ
import HTTPServer

/// What `GET /health` says: whether the gateway can serve Bluetooth, and if
/// not, which link is missing.
///
/// 503 when the gateway cannot serve Bluetooth at all and nothing a client
/// sends can change that (the bus connection is lost, bluetoothd is not
/// running, there is no adapter): a container's health check then fails
/// and its restart policy or an operator steps in. 200 with `degraded` when
/// the adapter is powered off, which a client can fix through the API
/// (`PATCH /v1/adapters/{adapter}`).
struct HealthReport {
    enum Status: String {
        case ok, degraded, unavailable
    }

    var status: Status
    /// `ok`, `bus-unavailable`, `bluetoothd-unavailable`, `no-adapter`,
    /// `adapter-off`.
    var state: String
    var detail: String
    var adapters: [Adapter]
    var bluezAvailable: Bool

    init(central: Central, defaultAdapter: String?) {
        let availability = central.availability
        adapters = central.adapters()
        bluezAvailable = availability == .available
        guard availability == .available else {
            (status, state, detail) = (.unavailable, availability.name, availability.detail)
            return
        }
        let known = adapters
        let adapter: Adapter? =
            if let defaultAdapter { known.first { $0.id == defaultAdapter } } else { known.first }
        guard let adapter else {
            let detail =
                defaultAdapter.map { "the adapter \($0) (--adapter) does not exist" } ?? "bluetoothd has no adapter"
            (status, state, self.detail) = (.unavailable, "no-adapter", detail)
            return
        }
        if adapter.state == .poweredOff {
            (status, state, detail) = (
                .degraded, "adapter-off",
                "\(adapter.id) is powered off; PATCH /v1/adapters/\(adapter.id) with {\"powered\": true} turns it on"
            )
        } else {
            (status, state, detail) = (.ok, "ok", "BlueZ is reachable and \(adapter.id) is powered on")
        }
    }

    var httpStatus: HTTPServer.Status { status == .unavailable ? .serviceUnavailable : .ok }

    var json: JSON {
        .object([
            ("status", .string(status.rawValue)),
            ("bluez", .string(bluezAvailable ? "available" : "unavailable")),
            ("state", .string(state)),
            ("detail", .string(detail)),
            (
                "adapters",
                .array(adapters.map { .object([("id", .string($0.id)), ("state", .string($0.state.rawValue))]) })
            ),
        ])
    }
}
