import Foundation
import Glibc

/// What `bench` runs and where (see main.swift for the options).
struct Options {
    var root = ".."
    var out = ""
    var duration = 8.0
    var churnSeconds = 60.0
    var advertisers = 1000
    var advertisingInterval = 0.1
    var fanout = [10, 100, 1000]
    var fanoutRate = 10_000.0
    var only: Set<String> = []
    /// How long to wait at the start for the shared machine to be quiet.
    var quietWait = 120.0

    func wants(_ phase: String) -> Bool { only.isEmpty || only.contains(phase) }
}

/// The benchmark: starts the private bus, the responder, the gateway and the
/// load generators, runs each measurement, and collects rows for the report.
///
/// Placement on this 2-core machine: the gateway alone on CPU 1; the bus
/// daemon, the responder (or simulator) and the load generators on CPU 0.
/// A raw baseline tool runs where the gateway would (CPU 1), and every
/// baseline runs while no gateway is on the bus, since the gateway would
/// otherwise receive the same signals and share the core.
final class Bench {
    let options: Options
    let gatewayCPU: Int?
    let loadCPU: Int?
    var rows: [Row] = []
    var results: [String: Any] = [:]
    var notes: [String] = []
    var observations: [String] = []
    var loadByPhase: [(String, [String: Double])] = []
    var logs: String { options.out + "/logs" }
    var baseline: [String: [String: Any]] = [:]

    // The main environment.
    var daemon: Child?
    var address = ""
    var responder: Child?
    var gateway: Child?
    var port = 0

    static let device = "B0:0B:00:00:00:01"
    static let readPath = "/v1/devices/\(device)/characteristics/fff1/value"
    static let notifyPath = "/v1/devices/\(device)/characteristics/fff2/notifications"

    init(options: Options) {
        self.options = options
        let cores = ProcessInfo.processInfo.activeProcessorCount
        gatewayCPU = cores >= 2 ? 1 : nil
        loadCPU = cores >= 2 ? 0 : nil
        mkdir(options.out, 0o755)
        mkdir(options.out + "/logs", 0o755)
    }

    func say(_ text: String) {
        var line = String(format: "[%7.1fs] ", Clock.seconds() - Bench.started) + text + "\n"
        line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// When the run started (read first in main).
    static let started = Clock.seconds()

    // MARK: Paths

    var gatewayBinary: String { options.root + "/.build/release/blegateway" }
    var simulatorBinary: String { options.root + "/.build/release/bluez-sim" }
    func tool(_ name: String) -> String { options.root + "/Benchmarks/.build/release/" + name }

    // MARK: Processes

    func startDaemon(_ tag: String) throws -> (Child, String) {
        let directory = options.out + "/bus-" + tag
        mkdir(directory, 0o755)
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/socket</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/><allow own="*"/>
                <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
              </policy>
              <limit name="max_replies_per_connection">128</limit>
            </busconfig>

            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        let child = try Child(
            "dbus-daemon", ["/usr/bin/dbus-daemon", "--nofork", "--config-file=\(directory)/bus.conf", "--print-address=1"],
            cpu: loadCPU, log: logs + "/dbus-daemon-\(tag).log")
        guard let line = child.readLine(timeout: 10), line.hasPrefix("unix:") else {
            throw BenchError("dbus-daemon did not start")
        }
        return (child, line)
    }

    func startResponder(_ address: String) throws -> Child {
        let child = try Child(
            "bench-responder", [tool("bench-responder"), "--bus", address], cpu: loadCPU, log: logs + "/responder.log")
        guard child.readLine(timeout: 10, where: { $0.hasPrefix("ready") }) != nil else {
            throw BenchError("bench-responder did not start")
        }
        return child
    }

    /// Starts the release gateway on `address` and waits for /health.
    func startGateway(_ address: String, port: Int, tag: String) throws -> Child {
        let child = try Child(
            "blegateway",
            [gatewayBinary, "serve", "--bus", address, "--listen", "127.0.0.1:\(port)", "--log-level", "warning",
             "--max-connections", "4096", "--max-connections-per-client", "0",
             // A state directory of the run's own: never the machine's
             // /var/lib/blegateway, which another gateway may hold.
             "--state-dir", options.out + "/state-\(tag)"],
            cpu: gatewayCPU, log: logs + "/gateway-\(tag).log")
        let deadline = Clock.seconds() + 20
        while Clock.seconds() < deadline {
            if let response = HTTPProbe.get(port: port, path: "/health", timeout: 1), response.status == 200 { return child }
            guard child.isRunning else { throw BenchError("blegateway exited; see \(logs)/gateway-\(tag).log") }
            Clock.sleep(0.005)
        }
        throw BenchError("blegateway did not answer /health")
    }

    /// Runs a tool to completion and returns its JSON result.
    func runTool(_ name: String, _ arguments: [String], cpu: Int?, timeout: Double) throws -> [String: Any] {
        let child = try Child(name, arguments, cpu: cpu, log: logs + "/\(name).log")
        let result = try child.resultJSON(timeout: timeout)
        child.wait(timeout: 5)
        return result
    }

    func emit(rate: Double, count: Int) throws -> (sent: Int, seconds: Double) {
        guard let responder else { throw BenchError("no responder") }
        responder.send("emit \(Int(rate)) \(count)")
        let timeout = Double(count) / rate * 3 + 30
        guard let line = responder.readLine(timeout: timeout, where: { $0.hasPrefix("done") || $0.hasPrefix("error") }),
            line.hasPrefix("done")
        else { throw BenchError("the responder did not finish emitting") }
        let words = line.split(separator: " ")
        return (Int(words[1]) ?? 0, (Double(words[2]) ?? 0) / 1e9)
    }

    func window(_ extra: [(String, pid_t)]) -> CPUWindow {
        var processes = extra
        if let daemon { processes.append(("dbus-daemon", daemon.pid)) }
        if let responder { processes.append(("responder", responder.pid)) }
        if let gateway { processes.append(("gateway", gateway.pid)) }
        return CPUWindow(processes)
    }

    func record(_ phase: String, _ cpu: [String: Double]) {
        loadByPhase.append((phase, cpu))
        if let foreign = cpu["foreign"], foreign > 15 {
            notes.append("During \(phase), other work on the machine used \(foreign)% of its CPU: that figure is noisy.")
        }
    }

    func add(_ row: Row) {
        rows.append(row)
        say("  \(row.metric): gateway \(Format.number(row.gateway, unit: row.unit)), raw \(Format.number(row.baseline, unit: row.unit)), ratio \(Format.ratio(row))")
    }

    // MARK: The run

    func run() throws {
        results["machine"] = Machine.describe()
        results["idle_before"] = waitForQuiet()
        say("machine: \(Machine.summary()); before the run: \(results["idle_before"] ?? "")")
        let (daemon, address) = try startDaemon("main")
        self.daemon = daemon
        self.address = address
        responder = try startResponder(address)
        say("bus \(address); responder started")

        say("baselines (no gateway on the bus)")
        if options.wants("startup") { try startupBaseline() }
        if options.wants("economy") { try economy(subject: .baseline) }
        if options.wants("rest") { try restBaseline() }
        if options.wants("notify") { try notifyBaseline() }
        if options.wants("fanout") && !options.wants("notify") { try ladder(subject: .baseline, rates: [options.fanoutRate]) }

        if options.wants("startup") { try startupGateway() }
        port = HTTPProbe.freePort()
        gateway = try startGateway(address, port: port, tag: "main")
        Clock.sleep(2)
        let idle = ProcStats.memory(gateway?.pid ?? 0)
        results["gateway_idle_rss_kib"] = idle?.rss ?? 0
        say("gateway on port \(port); idle RSS \(idle?.rss ?? 0) KiB")
        // Memory first, on a gateway that has served nothing yet.
        if options.wants("memory") { try memory(idleRSS: idle?.rss ?? 0) }
        if options.wants("economy") { try economy(subject: .gateway) }
        if options.wants("rest") { try restGateway() }
        if options.wants("notify") { try notifyGateway() }
        if options.wants("fanout") { try fanout() }
        if options.wants("memory") { try churn() }
        gateway?.stop()
        gateway = nil
        if options.wants("state") { try stateStore() }
        responder?.stop()
        responder = nil
        daemon.stop()
        self.daemon = nil
        if options.wants("scan") { try scan() }
        results["idle_after"] = Machine.idleSample(seconds: 2)
    }

    enum Subject { case gateway, baseline }

    /// The machine is shared: waits (up to `quietWait` seconds) for a 3 s
    /// window in which others use under 25% of it, so that runs start from
    /// comparable conditions; says how busy it was either way.
    func waitForQuiet() -> [String: Any] {
        let deadline = Clock.seconds() + options.quietWait
        var sample = Machine.idleSample(seconds: 3)
        while (sample["busy_percent"] as? Double ?? 0) >= 25, Clock.seconds() < deadline {
            say("the machine is \(sample["busy_percent"] ?? 0)% busy with other work; waiting for a quieter moment")
            Clock.sleep(7)
            sample = Machine.idleSample(seconds: 3)
        }
        sample["waited_s"] = (Clock.seconds() - Bench.started).rounded()
        return sample
    }
}
