import Metrics

/// What an event stream carries, as the `kind` label of its metrics.
enum StreamKind: String, Sendable, CaseIterable {
    /// `GET /v1/scan`: a discovery session's results.
    case scan
    /// `GET .../notifications`: one characteristic's values.
    case notifications
    /// `GET /v1/events`: the gateway-wide event log.
    case events
    /// `GET /v1/peripheral/events`: requests from centrals to the
    /// applications the gateway publishes.
    case peripheral

    /// `blegateway_open_streams{kind}`: streams open now.
    var openGauge: Meter {
        switch self {
        case .scan: Self.instruments.scan.open
        case .notifications: Self.instruments.notifications.open
        case .events: Self.instruments.events.open
        case .peripheral: Self.instruments.peripheral.open
        }
    }

    /// `blegateway_streams_dropped_total{kind}`: streams dropped because
    /// their client read too slowly (the writer's buffer went over its limit).
    var droppedCounter: Counter {
        switch self {
        case .scan: Self.instruments.scan.dropped
        case .notifications: Self.instruments.notifications.dropped
        case .events: Self.instruments.events.dropped
        case .peripheral: Self.instruments.peripheral.dropped
        }
    }

    private struct Instruments: Sendable {
        let open: Meter
        let dropped: Counter

        init(_ kind: StreamKind) {
            open = Meter(label: "blegateway_open_streams", dimensions: [("kind", kind.rawValue)])
            dropped = Counter(label: "blegateway_streams_dropped_total", dimensions: [("kind", kind.rawValue)])
        }
    }

    // Made once (the first time a stream opens, after the program has
    // bootstrapped its metrics backend), so opening a stream costs no lookup.
    private static let instruments = (
        scan: Instruments(.scan), notifications: Instruments(.notifications), events: Instruments(.events),
        peripheral: Instruments(.peripheral)
    )
}
