import Metrics
import Prometheus
import Synchronization

/// The program's metrics backend: swift-metrics bootstrapped once, process
/// wide, with a Prometheus registry, which `GET /metrics` renders.
///
/// Everything below the executable records through swift-metrics and
/// knows nothing of Prometheus; this is the one place that chooses it.
enum MetricsBackend {
    /// The registry every metric lands in.
    static let registry = PrometheusCollectorRegistry()

    /// What reads figures kept elsewhere (the process, BlueZ's state, the
    /// MQTT client, the store) into gauges just before each scrape.
    private static let readers = Mutex<[@Sendable () -> Void]>([{ ProcessMetrics.shared.update() }])

    /// Bootstraps swift-metrics with the registry. Call it once, before any
    /// metric is made: swift-metrics allows one bootstrap per process, and a
    /// metric made before it stays a no-op.
    static func bootstrap() {
        MetricsSystem.bootstrap(
            DescribedMetricsFactory(
                registry: registry,
                durationBuckets: [
                    .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                    .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                    .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
                ],
                valueBuckets: [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]))
        Gauge(label: "blegateway_build_info", dimensions: [("version", BLEGateway.version)]).record(1)
        // Made now, so that its start time is the program's.
        _ = ProcessMetrics.shared
    }

    /// Adds `reader` to what runs before each scrape.
    static func readBeforeEachScrape(_ reader: @escaping @Sendable () -> Void) {
        readers.withLock { $0.append(reader) }
    }

    /// The text exposition of every metric, with the figures kept elsewhere
    /// read first.
    @Sendable static func exposition() -> [UInt8] {
        for reader in readers.withLock({ $0 }) { reader() }
        return registry.emitToBuffer()
    }
}
