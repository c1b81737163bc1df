import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Metrics

/// The process's own figures, read from /proc when metrics are scraped
/// (the names Prometheus's client libraries use for them):
///
/// - `process_cpu_seconds_total` (user + system time, /proc/self/stat);
/// - `process_resident_memory_bytes` and `process_virtual_memory_bytes`
///   (/proc/self/statm);
/// - `process_open_fds` (the entries of /proc/self/fd);
/// - `process_max_fds` (the soft RLIMIT_NOFILE);
/// - `process_start_time_seconds` (since the Unix epoch).
final class ProcessMetrics: Sendable {
    static let shared = ProcessMetrics()

    private let cpuSeconds = CounterMirror("process_cpu_seconds_total")
    private let residentMemory = Gauge(label: "process_resident_memory_bytes")
    private let virtualMemory = Gauge(label: "process_virtual_memory_bytes")
    private let openDescriptors = Gauge(label: "process_open_fds")
    private let maxDescriptors = Gauge(label: "process_max_fds")

    private init() {
        Gauge(label: "process_start_time_seconds").record(Date().timeIntervalSince1970)
    }

    /// Reads the current figures.
    func update() {
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ").compactMap { Double($0.trimming(where: \.isWhitespace)) }
            if fields.count >= 2 {
                virtualMemory.record(fields[0] * pageSize)
                residentMemory.record(fields[1] * pageSize)
            }
        }
        if let seconds = Self.cpuSeconds() { cpuSeconds.set(seconds) }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The directory listing itself holds one descriptor while it runs.
            openDescriptors.record(max(0, entries.count - 1))
        }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            maxDescriptors.record(Double(limit.rlim_cur))
        }
    }

    /// User + system time from /proc/self/stat (fields 14 and 15, in clock
    /// ticks). The fields are counted after the command name's closing
    /// parenthesis, since the name itself may hold spaces.
    private static func cpuSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): utime is field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }
}
