import Foundation
import Glibc

/// What the machine is, and how busy it was.
enum Machine {
    static func describe() -> [String: Any] {
        let cpuinfo = ProcStats.read("/proc/cpuinfo") ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let memory = (ProcStats.read("/proc/meminfo") ?? "").split(separator: "\n").first { $0.hasPrefix("MemTotal") }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }.flatMap { Int($0) } ?? 0
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let os = (ProcStats.read("/etc/os-release") ?? "").split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst(12).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "Linux"
        return [
            "cpu": model, "cores": ProcessInfo.processInfo.activeProcessorCount, "memory_mib": memory / 1024,
            "kernel": kernel, "os": os, "swift": swiftVersion(),
            "build": "swift build -c release (-O, whole-module), blegateway and bluez-sim from the main package; tools from Benchmarks/",
            "libdbus": packageVersion("libdbus-1-3"), "libmicrohttpd": packageVersion("libmicrohttpd12"),
            "wrk": packageVersion("wrk"),
        ]
    }

    /// The peer's Python and the versions of the packages it runs on.
    static func peer(python: String) -> [String: Any] {
        let script = "import sys; from importlib.metadata import version as v; "
            + "print(sys.version.split()[0]); print(', '.join(p + ' ' + v(p) for p in ('bleak', 'dbus-fast', 'aiohttp')))"
        guard let child = try? Child("python", [python, "-c", script], cpu: nil, log: "/dev/null") else { return [:] }
        let lines = child.readRest(timeout: 30)
        guard lines.count >= 2 else { return [:] }
        return ["python": lines[0], "peer_packages": lines[1]]
    }

    static func summary() -> String {
        let machine = describe()
        return "\(machine["cpu"] ?? ""), \(machine["cores"] ?? 0) cores, \(machine["memory_mib"] ?? 0) MiB"
    }

    static func swiftVersion() -> String {
        guard let child = try? Child("swift", ["/bin/sh", "-c", "swift --version 2>&1 | head -1"], cpu: nil, log: "/dev/null")
        else { return "unknown" }
        return child.readRest(timeout: 30).first ?? "unknown"
    }

    static func packageVersion(_ name: String) -> String {
        guard let child = try? Child("dpkg-query", ["/usr/bin/dpkg-query", "-W", "-f=${Version}", name], cpu: nil, log: "/dev/null")
        else { return "unknown" }
        return child.readRest(timeout: 10).first ?? "unknown"
    }

    /// The machine's busy share over a few seconds while the benchmark runs
    /// nothing: what others were doing.
    static func idleSample(seconds: Double) -> [String: Any] {
        let window = CPUWindow([])
        Clock.sleep(seconds)
        let cpu = window.finish()
        return ["busy_percent": cpu["machine"] ?? 0, "load_average": ProcStats.loadAverage(), "seconds": seconds]
    }
}
