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
    /// Subscriber counts of the fan-out phase, at `fanoutRate` events/s.
    var fanout = [100, 1000]
    var fanoutRate = 1000.0
    /// How long the memory phase waits after 1,000 streams close before it
    /// reads RSS again.
    var settleSeconds = 60.0
    /// `--only` / BENCH_PHASES: phases (`read`), or one subject's phase
    /// (`peer-read`, `gateway-read`, `raw-read`); empty runs everything.
    var only: Set<String> = []
    /// How long to wait at the start for the shared machine to be quiet.
    var quietWait = 120.0
    /// Seconds measured per point of the curves phase (BENCH_CURVE_SECONDS).
    var curveSeconds = 3.0
    /// The curves to draw (BENCH_CURVES: reads, notify, fanout, kept, scan);
    /// empty draws them all.
    var curves: Set<String> = []
    /// Whether the run may write BENCHMARKS.md and the committed charts
    /// (`--no-update` leaves both alone).
    var update = true

    /// The phases, in the order they run; `--only` accepts these names (a
    /// phase added in a file of its own adds its name here).
    static let phases = ["startup", "memory", "economy", "read", "notify", "fanout", "churn", "state", "scan", "burst", "bleak", "fleet", "curves", "image"]
    static let aliases = ["rest": "read"]

    /// Whether `phase` runs for `subject` (nil: for any subject).
    func wants(_ phase: String, _ subject: Subject? = nil) -> Bool {
        guard !only.isEmpty else { return true }
        if only.contains(phase) { return true }
        if let subject { return only.contains("\(subject.rawValue)-\(phase)") }
        return Subject.allCases.contains { only.contains("\($0.rawValue)-\(phase)") }
    }

    /// Whether every phase runs (a complete run may update BENCHMARKS.md).
    var complete: Bool { only.isEmpty }

    /// Parses a `--only` list; nil and a message when an entry names no phase.
    static func phases(_ list: String) -> (Set<String>, String?) {
        var out: Set<String> = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            var words = entry.split(separator: "-", maxSplits: 1).map(String.init)
            if words.count == 2, Subject(rawValue: words[0]) == nil { words = [entry] }
            let phase = aliases[words.last ?? ""] ?? words.last ?? ""
            guard phases.contains(phase) else {
                return (out, "unknown phase \(entry) (phases: \(phases.joined(separator: ", ")); a subject prefix raw-, gateway- or peer- picks one subject's run)")
            }
            out.insert(words.count == 2 ? "\(words[0])-\(phase)" : phase)
        }
        return (out, nil)
    }
}

/// Who a phase measures: the raw libdbus floor, blegateway, or the peer (a
/// small Bleak + aiohttp gateway, Benchmarks/peer/).
enum Subject: String, CaseIterable {
    case raw, gateway, peer

    /// Its name in the report's columns and CPU tables.
    var label: String {
        switch self {
        case .raw: "raw libdbus"
        case .gateway: "blegateway"
        case .peer: "peer (Bleak + aiohttp)"
        }
    }
}

/// The benchmark: starts the private bus, the responder, the gateway, the
/// peer and the load generators, runs each measurement, and collects rows
/// for the report.
///
/// Placement on this 2-core machine: the gateway (or the peer) alone on
/// CPU 1; the bus daemon, the responder (or simulator) and the load
/// generators on CPU 0. A raw baseline tool runs where the gateway would
/// (CPU 1). Whoever is measured is alone on the bus with the responder:
/// every baseline runs while no gateway is on it, and the gateway and the
/// peer take turns (`use(_:)`), since each would otherwise receive the
/// other's signals and share its core.
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
    /// The figures the targets are judged by, named `subject.figure`
    /// (`gateway.read16.rps`, `peer.notify.best_rate`, ...).
    var figures: [String: Double] = [:]
    /// The targets table; a phase may add its own rows (see Targets.swift).
    var targets: [TargetRow] = []
    /// How long each phase took, in the order they ran.
    var timings: [(String, Double)] = []

    // The main environment.
    var daemon: Child?
    var address = ""
    var responder: Child?
    var gateway: Child?
    var port = 0
    var peer: Child?
    var peerPort = 0

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
        // The harness's phases measure the signal path (PropertiesChanged
        // through dbus-daemon), which the peer and the raw floor also take,
        // so their figures compare run by run; the `bleak` phase's script
        // lets the gateway take AcquireNotify, as bluetoothd offers it.
        let child = try Child(
            "bench-responder", [tool("bench-responder"), "--bus", address, "--no-acquire-notify"], cpu: loadCPU,
            log: logs + "/responder.log")
        guard child.readLine(timeout: 10, where: { $0.hasPrefix("ready") }) != nil else {
            throw BenchError("bench-responder did not start")
        }
        return child
    }

    /// Starts the release gateway on `address` and waits for /health. Its
    /// state goes to a directory of the run's own (never the machine's
    /// /var/lib/blegateway, which another gateway may hold) unless
    /// `state` gives other options (`--no-state`, a shared directory).
    /// `maxConnections` is its `--max-connections` (the curves' 10,000
    /// subscribers need more than the usual 4,096).
    func startGateway(
        _ address: String, port: Int, tag: String, state: [String]? = nil, logLevel: String = "warning",
        healthTimeout: Double = 20, maxConnections: Int = 4096
    ) throws -> Child {
        let child = try Child(
            "blegateway",
            [gatewayBinary, "serve", "--bus", address, "--listen", "127.0.0.1:\(port)", "--log-level", logLevel,
             "--max-connections", String(maxConnections), "--max-connections-per-client", "0"]
                + (state ?? ["--state-dir", options.out + "/state-\(tag)"]),
            cpu: gatewayCPU, log: logs + "/gateway-\(tag).log")
        try waitForHealth(child, port: port, log: "gateway-\(tag).log", timeout: healthTimeout)
        return child
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
        if let peer { processes.append(("peer", peer.pid)) }
        return CPUWindow(processes)
    }

    /// Runs one phase and records how long it took.
    func timed(_ phase: String, _ body: () throws -> Void) rethrows {
        let start = Clock.seconds()
        defer {
            let seconds = Clock.seconds() - start
            timings.append((phase, seconds))
            say("  (\(phase): \(Format.number(seconds)) s)")
        }
        try body()
    }

    func record(_ phase: String, _ cpu: [String: Double]) {
        loadByPhase.append((phase, cpu))
        if let foreign = cpu["foreign"], foreign > 15 {
            notes.append("During \(phase), other work on the machine used \(foreign)% of its CPU: that figure is noisy.")
        }
    }

    func add(_ row: Row) {
        rows.append(row)
        say("  \(row.metric): gateway \(Format.number(row.gateway, unit: row.unit)), peer \(Format.number(row.peer, unit: row.unit)), raw \(Format.number(row.baseline, unit: row.unit)); ÷ peer \(Format.ratio(row.peerRatio)), ÷ raw \(Format.ratio(row))")
    }

    // MARK: The run

    func run() throws {
        results["machine"] = Machine.describe().merging(Machine.peer(python: peerPython)) { $1 }
        results["idle_before"] = waitForQuiet()
        say("machine: \(Machine.summary()); before the run: \(results["idle_before"] ?? "")")
        let (daemon, address) = try startDaemon("main")
        self.daemon = daemon
        self.address = address
        responder = try startResponder(address)
        say("bus \(address); responder started")

        // The raw floor first, while nothing else is on the bus.
        say("baselines (no gateway on the bus)")
        if options.wants("startup", .raw) { try timed("raw startup") { try startupBaseline() } }
        if options.wants("economy", .raw) { try timed("raw economy") { try economy(subject: .raw) } }
        if options.wants("read", .raw) { try timed("raw read") { try restBaseline() } }
        if options.wants("notify", .raw) { try timed("raw notify") { try notifyBaseline() } }
        if options.wants("fanout", .raw) && !options.wants("notify", .raw) {
            try timed("raw fanout") { try ladder(subject: .raw, rates: [options.fanoutRate]) }
        }

        // Then blegateway and the peer, one at a time on the bus (each would
        // receive the other's signals), alternating within each phase so
        // that the machine's noise hits both.
        if !contenders(for: "startup").isEmpty { try timed("startup") { try startup() } }
        // Memory first, on fresh processes that have served nothing yet.
        if !contenders(for: "memory").isEmpty { try timed("memory") { try memory() } }
        if options.wants("economy", .gateway) { try timed("gateway economy") { try use(.gateway); try economy(subject: .gateway) } }
        if !contenders(for: "read").isEmpty { try timed("read") { try reads() } }
        if !contenders(for: "notify").isEmpty { try timed("notify") { try notifications() } }
        if !contenders(for: "fanout").isEmpty { try timed("fanout") { try fanout() } }
        if options.wants("churn", .gateway) { try timed("churn") { try use(.gateway); try churn() } }
        if options.wants("state", .gateway) { try timed("state") { try use(.raw); try stateStore() } }
        if Subject.allCases.contains(where: { options.wants("curves", $0) }) { try timed("curves") { try curves() } }
        try use(.raw)
        responder?.stop()
        responder = nil
        daemon.stop()
        self.daemon = nil
        if options.wants("scan", .gateway) { try timed("scan") { try scan() } }
        if options.wants("burst", .gateway) { try timed("burst") { try burst() } }
        if options.wants("bleak", .gateway) { try timed("bleak") { try bleak() } }
        if options.wants("fleet", .gateway) { try timed("fleet") { try fleet() } }
        if options.wants("image", .gateway) { try timed("image") { try image() } }
        results["idle_after"] = Machine.idleSample(seconds: 2)
    }

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
