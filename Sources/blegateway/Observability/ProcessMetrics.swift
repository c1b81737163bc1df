import Foundation
import Prometheus

/// The process's own figures, read from /proc when metrics are scraped
/// (the names Prometheus's client libraries use for them):
///
/// - `process_resident_memory_bytes` (from /proc/self/statm);
/// - `process_virtual_memory_bytes` (the same);
/// - `process_open_fds` (the entries of /proc/self/fd);
/// - `process_max_fds` (the soft RLIMIT_NOFILE);
/// - `process_start_time_seconds` (since the Unix epoch).
final class ProcessMetrics: Sendable {
    static let shared = ProcessMetrics(registry: MetricsBackend.registry)

    private let residentMemory: Gauge
    private let virtualMemory: Gauge
    private let openDescriptors: Gauge
    private let maxDescriptors: Gauge

    init(registry: PrometheusCollectorRegistry) {
        func gauge(_ name: String, _ unit: String, _ help: String) -> Gauge {
            registry.makeGauge(
                descriptor: MetricNameDescriptor(namespace: "process", metricName: name, unitName: unit, helpText: help))
        }
        residentMemory = gauge("resident_memory", "bytes", "Resident memory size in bytes.")
        virtualMemory = gauge("virtual_memory", "bytes", "Virtual memory size in bytes.")
        openDescriptors = gauge("open", "fds", "Number of open file descriptors.")
        maxDescriptors = gauge("max", "fds", "Maximum number of open file descriptors.")
        gauge("start_time", "seconds", "Start time of the process since the Unix epoch in seconds.")
            .set(Date().timeIntervalSince1970)
    }

    /// Reads the current figures.
    func update() {
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if fields.count >= 2 {
                virtualMemory.set(fields[0] * pageSize)
                residentMemory.set(fields[1] * pageSize)
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The directory listing itself holds one descriptor while it runs.
            openDescriptors.set(Double(max(0, entries.count - 1)))
        }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxDescriptors.set(Double(limit.rlim_cur)) }
    }
}
