import Metrics
import Prometheus

/// The program's metrics backend: swift-metrics bootstrapped once, process
/// wide, with a Prometheus registry, which `GET /metrics` renders.
///
/// Everything below the executable records through swift-metrics and
/// knows nothing of Prometheus; this is the one place that chooses it.
enum MetricsBackend {
    /// The registry every metric lands in.
    static let registry = PrometheusCollectorRegistry()

    /// Bootstraps swift-metrics with the registry. Call it once, before any
    /// metric is made: swift-metrics allows one bootstrap per process, and a
    /// metric made before it stays a no-op.
    static func bootstrap() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
        ]
        MetricsSystem.bootstrap(factory)
    }

    /// The text exposition of every metric, with the process's figures
    /// read from /proc first.
    @Sendable static func exposition() -> [UInt8] {
        ProcessMetrics.shared.update()
        return registry.emitToBuffer()
    }
}
