import Foundation
import Glibc

/// CPU and memory of processes and of the machine, from /proc.
enum ProcStats {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// utime + stime of a process (all its threads), in seconds.
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after "pid (comm) ": state is field 3; utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// VmRSS and VmHWM of a process, in KiB.
    static func memory(_ pid: pid_t) -> (rss: Int, peak: Int)? {
        guard let text = read("/proc/\(pid)/status") else { return nil }
        var rss = 0, peak = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { rss = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0 }
            if line.hasPrefix("VmHWM:") { peak = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0 }
        }
        return (rss, peak)
    }

    static func threads(_ pid: pid_t) -> Int {
        guard let text = read("/proc/\(pid)/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
        }
        return 0
    }

    /// Busy and total jiffies of the whole machine (all CPUs), from /proc/stat.
    static func machine() -> (busy: Double, total: Double) {
        guard let text = read("/proc/stat"), let line = text.split(separator: "\n").first else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return (0, 0) }
        // user nice system idle iowait irq softirq steal (guest is in user)
        let idle = values[3] + values[4]
        let total = values.prefix(8).reduce(0, +)
        return (total - idle, total)
    }

    static func loadAverage() -> String {
        (read("/proc/loadavg") ?? "").split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// CPU use over a window: of named processes (% of one core) and of the
/// machine; "foreign" is what the machine did beyond our processes (other
/// engineers' builds and tests on this shared machine).
struct CPUWindow {
    private let start: Double
    private let startMachine: (busy: Double, total: Double)
    private var startProcesses: [(String, pid_t, Double)] = []

    init(_ processes: [(String, pid_t)]) {
        start = Clock.seconds()
        startMachine = ProcStats.machine()
        startProcesses = processes.compactMap { name, pid in ProcStats.cpuSeconds(pid).map { (name, pid, $0) } }
    }

    /// Per process: % of one core; plus machine busy % (of all cores),
    /// foreign % (of all cores) and the window's length (`window_s`).
    func finish() -> [String: Double] {
        let elapsed = Clock.seconds() - start
        let machine = ProcStats.machine()
        var result: [String: Double] = ["window_s": (elapsed * 1000).rounded() / 1000]
        var ours = 0.0
        for (name, pid, before) in startProcesses {
            guard let after = ProcStats.cpuSeconds(pid) else { continue }
            let used = after - before
            ours += used
            result[name, default: 0] += (used / elapsed * 1000).rounded() / 10
        }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let busyTicks = machine.busy - startMachine.busy
        let totalTicks = machine.total - startMachine.total
        if totalTicks > 0 {
            result["machine"] = (busyTicks / totalTicks * 1000).rounded() / 10
            let foreign = max(0, busyTicks / ProcStats.ticksPerSecond - ours) / (elapsed * cores) * 100
            result["foreign"] = (foreign * 10).rounded() / 10
        }
        return result
    }
}
