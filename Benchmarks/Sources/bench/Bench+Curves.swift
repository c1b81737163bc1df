import Foundation
import Glibc

/// The `curves` phase (issue 29): how cost grows with an install, as
/// curves rather than points, for the gateway, the peer and the raw floor
/// where one exists. Each point is measured with the other phases' means
/// (wrk, dbus-floor, sse-load, bluez-sim, the release gateway, the peer),
/// in shorter windows (`curveSeconds`); the points go to report.json
/// (`curves`) and report.md, and scripts/bench-curves.py (run with the
/// peer's Python, which has matplotlib) draws one PNG per curve and the
/// tables of BENCHMARKS.md's "Curves" section.
///
/// - reads: reads/s and p50 against 1 … 256 clients (wrk; dbus-floor with
///   as many ReadValue calls in flight);
/// - notify: CPU against the notification rate, one subscriber (sse-load;
///   dbus-floor listen);
/// - fanout: events delivered against subscribers, 10 … 10,000, at
///   `curveFanoutRate` values/s (sse-load; no raw floor: one D-Bus signal
///   reaches one receiver);
/// - kept: RSS and CPU against kept devices, without and with a standing
///   subscription each (bluez-sim; the gateway alone: the peer has neither
///   keep nor standing subscriptions);
/// - scan: scan events/s against advertisers in range, 100 … 5,000
///   (bluez-sim; the peer has no scan stream).
///
/// A point that fails is recorded with its error and left out of the chart,
/// never estimated.
extension Bench {
    static let curveClients = [1, 2, 4, 8, 16, 64, 256]
    static let curveRates: [Double] = [100, 300, 1000, 3000, 10_000, 30_000]
    static let curveSubscribers = [10, 100, 1000, 10_000]
    static let curveKeptDevices = [10, 100, 1000]
    /// The most connection slots the gateway takes for one adapter.
    static let slotsPerAdapter = 100
    static let curveAdvertisers = [100, 300, 1000, 3000, 5000]
    /// Values/s of the fan-out curve: 10,000 subscribers then make 1,000,000
    /// events/s, what the gateway's core delivered at 1,000 × 1 kHz.
    static let curveFanoutRate = 100.0
    /// Seconds between the reports of each simulated advertiser on the scan
    /// curve: 5,000 of them make 10,000 reports/s, about what the simulator
    /// emits on its shared core (at 0.2 s it fell behind from 3,000 on).
    static let curveAdvertisingInterval = 0.5
    static let curveNames = ["reads", "notify", "fanout", "kept", "scan"]

    func curves() throws {
        let seconds = options.curveSeconds
        raiseFileLimit()
        var all: [String: Any] = ["point_seconds": seconds, "load_average_before": ProcStats.loadAverage()]
        let started = Clock.seconds()
        let wanted = options.curves.isEmpty ? Set(Self.curveNames) : options.curves
        for name in Self.curveNames where wanted.contains(name) {
            let start = Clock.seconds(), load = ProcStats.loadAverage()
            var curve: [String: Any]
            switch name {
            case "reads": curve = try readCurve(seconds: seconds)
            case "notify": curve = try notifyCurve(seconds: seconds)
            case "fanout": curve = try fanoutCurve(seconds: seconds)
            case "kept": curve = try keptCurve(seconds: seconds)
            default: curve = try scanCurve(seconds: seconds)
            }
            curve["seconds"] = (Clock.seconds() - start).rounded()
            curve["load_average_before"] = load
            curve["load_average_after"] = ProcStats.loadAverage()
            all[name] = curve
            say("  curve \(name): \(Format.number(Clock.seconds() - start)) s, load average \(load) → \(ProcStats.loadAverage())")
        }
        all["seconds"] = (Clock.seconds() - started).rounded()
        all["load_average_after"] = ProcStats.loadAverage()
        results["curves"] = all
        addCurveRows(all)
        try drawCurves(all)
    }

    /// Children inherit the runner's limit: 10,000 streams need as many
    /// descriptors in the gateway, the peer and sse-load (which raises its
    /// own soft limit to the hard one, as this does).
    func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_max < 12_000 {
            notes.append("Curves: the descriptor limit is \(limit.rlim_max): 10,000 streams may fail to open.")
        }
    }

    /// Runs `measure`, or records why it could not: a point is measured or
    /// it is absent, with its error beside it.
    func point(_ label: String, _ measure: () throws -> [String: Any]) -> [String: Any] {
        do {
            return try measure()
        } catch {
            say("  \(label): FAILED: \(error)")
            return ["error": "\(error)"]
        }
    }

    // MARK: Reads

    func readCurve(seconds: Double) throws -> [String: Any] {
        let script = try wrkScript()
        var series: [String: [[String: Any]]] = [:]
        for clients in Self.curveClients {
            if options.wants("curves", .raw) {
                try use(.raw)
                var entry = point("raw reads ×\(clients)") {
                    let result = try rawRead(inflight: clients, duration: seconds)
                    // The bus allows 128 pending replies a connection and
                    // answers calls beyond with errors, which are not reads
                    // (dbus-floor counts them over its warm-up too).
                    guard result.int("errors") == 0 else {
                        throw BenchError("the bus refused \(result.int("errors")) ReadValue calls (128 pending replies a connection at most)")
                    }
                    return ["rps": result.double("rps"), "p50_us": result.double("p50_us"), "p99_us": result.double("p99_us"),
                            "errors": result.int("errors"), "cpu_percent": cpu(result, "raw")]
                }
                entry["clients"] = clients
                series["raw", default: []].append(entry)
            }
            for subject in contenders(for: "curves") {
                try use(subject)
                let target = endpoint(subject)
                var entry = point("\(subject.rawValue) reads ×\(clients)") {
                    let result = try wrk(script: script, port: target.port, path: target.readPath, clients: clients,
                                         label: "\(subject.rawValue) read (curve)", duration: seconds)
                    // Only 2xx answers count as reads.
                    let answered = result.double("requests") - result.double("non2xx")
                    guard answered > 0 else {
                        throw BenchError("no read answered in the window (\(result.int("errors")) socket errors, \(result.int("non2xx")) non-2xx)")
                    }
                    return ["rps": answered / max(0.001, result.double("duration_us") / 1e6), "p50_us": result.double("p50_us"),
                            "p99_us": result.double("p99_us"), "errors": result.int("errors") + result.int("non2xx"),
                            "cpu_percent": cpu(result, subject.rawValue)]
                }
                entry["clients"] = clients
                series[subject.rawValue, default: []].append(entry)
            }
        }
        return ["x": "clients", "series": series,
                "note": "Raw: dbus-floor with as many ReadValue calls in flight as there are clients; the bus allows 128 pending replies per connection"]
    }

    // MARK: Notifications

    func notifyCurve(seconds: Double) throws -> [String: Any] {
        var series: [String: [[String: Any]]] = [:]
        for rate in Self.curveRates {
            let count = Int(rate * seconds)
            if options.wants("curves", .raw) {
                try use(.raw)
                var entry = point("raw notify \(Int(rate))/s") {
                    let result = try rawListen(rate: rate, count: count)
                    return notifyEntry(result, process: "raw", count: count, rate: rate)
                }
                entry["rate"] = rate
                series["raw", default: []].append(entry)
            }
            for subject in contenders(for: "curves") {
                try use(subject)
                var entry = point("\(subject.rawValue) notify \(Int(rate))/s") {
                    let result = try stream(subject, clients: 1, rate: rate, count: count, phase: "\(subject.rawValue) curve \(Int(rate))/s")
                    return notifyEntry(result, process: subject.rawValue, count: count, rate: rate)
                }
                entry["rate"] = rate
                series[subject.rawValue, default: []].append(entry)
            }
        }
        return ["x": "rate", "series": series]
    }

    private func notifyEntry(_ result: [String: Any], process: String, count: Int, rate: Double) -> [String: Any] {
        let received = result.int("unique")
        let emitterKeptUp = result.double("emit_seconds") <= Double(count) / rate * 1.1 + 0.05
        return ["cpu_percent": cpu(result, process), "received": received, "sent": count, "lost": count - received,
                "p50_us": result.double("p50_us"), "p99_us": result.double("p99_us"),
                "lossless": received == count && result.int("out_of_order") == 0 && result.int("closed_early") == 0,
                "emitter_kept_up": emitterKeptUp]
    }

    // MARK: Fan-out

    func fanoutCurve(seconds: Double) throws -> [String: Any] {
        let rate = Self.curveFanoutRate
        let count = Int(rate * seconds)
        var series: [String: [[String: Any]]] = [:]
        for subscribers in Self.curveSubscribers {
            for subject in contenders(for: "curves") {
                if subject == .gateway {
                    // The usual gateway admits 4,096 connections.
                    try use(.raw)
                    port = HTTPProbe.freePort()
                    gateway = try startGateway(address, port: port, tag: "curves", maxConnections: 12_000)
                    Clock.sleep(0.5)
                } else {
                    try use(subject)
                }
                var entry = point("\(subject.rawValue) fan-out ×\(subscribers)") {
                    let result = try stream(subject, clients: subscribers, rate: rate, count: count,
                                            phase: "\(subject.rawValue) curve fan-out ×\(subscribers)", grace: 60)
                    let delivered = result.double("notifications")
                    let window = (result["cpu"] as? [String: Double])?["window_s"] ?? 0
                    return ["delivered": delivered, "expected": Double(count * subscribers),
                            "not_delivered": Double(count * subscribers) - result.double("unique"),
                            "delivered_rate": result.double("delivered_rate"), "offered_rate": rate * Double(subscribers),
                            "dropped": result.int("closed_early"), "failed": result.int("failed"),
                            "cpu_percent": cpu(result, subject.rawValue), "window_s": window,
                            "p50_us": result.double("p50_us"), "p99_us": result.double("p99_us"),
                            "peak_rss_mib": result.double("\(subject.rawValue)_peak_rss_kib") / 1024]
                }
                entry["subscribers"] = subscribers
                series[subject.rawValue, default: []].append(entry)
            }
            // The next count starts a fresh gateway with the larger limit.
            if let running = gateway {
                running.stop()
                gateway = nil
            }
        }
        return ["x": "subscribers", "rate": rate, "series": series,
                "note": "No raw floor: a D-Bus signal reaches one receiver; the offered line is rate × subscribers"]
    }

    // MARK: Kept devices

    /// Kept devices on a bus and simulator of their own, as the state
    /// phase keeps them (heart-rate sensors notifying once a second): for
    /// each count, the gateway's RSS and CPU with nothing kept, with every
    /// device kept and connected, and with a standing subscription each.
    func keptCurve(seconds: Double) throws -> [String: Any] {
        guard options.wants("curves", .gateway) else { return ["x": "devices", "series": [:]] }
        var points: [[String: Any]] = []
        for devices in Self.curveKeptDevices {
            var entry = point("kept ×\(devices)") { try keptPoint(devices: devices, seconds: seconds) }
            entry["devices"] = devices
            points.append(entry)
        }
        return ["x": "devices", "series": ["gateway": points],
                "note": "The peer has neither keep nor standing subscriptions: no peer curve; no raw floor"]
    }

    func keptPoint(devices count: Int, seconds: Double) throws -> [String: Any] {
        say("curve: \(count) kept devices")
        let tag = "curve-kept-\(count)"
        let (daemon, busAddress) = try startDaemon(tag)
        defer { daemon.stop() }
        func address(_ index: Int) -> String { String(format: "E1:00:00:00:%02X:%02X", index >> 8, index & 0xFF) }
        // The gateway takes at most 100 connection slots an adapter: 1,000
        // links need ten simulated adapters, each hearing its own hundred.
        let adapters = (count + Self.slotsPerAdapter - 1) / Self.slotsPerAdapter
        var yaml = "# \(count) connectable heart-rate sensors, notifying once a second, on \(adapters) adapter(s)\ntiming: 1\nadapters:\n"
        for index in 0..<adapters { yaml += "  - id: hci\(index)\n" }
        yaml += "devices:\n"
        for index in 0..<count {
            yaml += keptSensorYAML(address: address(index), index: index, adapter: "hci\(index % adapters)")
        }
        let scenario = options.out + "/\(tag).yaml"
        try yaml.write(toFile: scenario, atomically: true, encoding: .utf8)
        let simulator = try startSimulator(busAddress, scenario: scenario, tag: tag)
        defer { simulator.stop() }
        let directory = options.out + "/state-\(tag)"
        mkdir(directory, 0o700)
        let keepPort = HTTPProbe.freePort()
        let child = try startGateway(busAddress, port: keepPort, tag: tag,
                                     extra: ["--state-dir", directory, "--connection-slots", String(min(count, Self.slotsPerAdapter))]
                                         + keepQuotas(count))
        defer { child.stop() }
        Clock.sleep(1)
        func rss() -> Double { Double(ProcStats.memory(child.pid)?.rss ?? 0) / 1024 }
        let idle = wakeups(child.pid, seconds: seconds)
        let idleRSS = rss()
        let start = Clock.seconds()
        // Each on the adapter that hears it: a device no adapter has listed
        // yet would be kept on the first, whose slots hold only a hundred.
        try curl(port: keepPort, (0..<count).map { ("PUT", "/v1/devices/\(address($0))/keep?adapter=hci\($0 % adapters)", nil) })
        // Polled less often as the list grows: answering a list of 1,000
        // every 20 ms would take the gateway's time from what it waits for.
        let every = max(0.02, Double(count) / 2000)
        guard let connected = waitUntil(port: keepPort, path: "/v1/kept-connections", field: "status", value: "connected",
                                        count: count, timeout: 300, every: every)
        else { throw BenchError("\(count) kept devices not all connected within 300 s") }
        Clock.sleep(1)
        let kept = wakeups(child.pid, seconds: seconds)
        let keptRSS = rss()
        try curl(port: keepPort, (0..<count).map {
            ("POST", "/v1/subscriptions", #"{"device":"\#(address($0))","adapter":"hci\#($0 % adapters)","characteristic":"2a37"}"#)
        })
        guard waitUntil(port: keepPort, path: "/v1/subscriptions", field: "status", value: "active", count: count, timeout: 300,
                        every: every) != nil
        else { throw BenchError("\(count) standing subscriptions not all active within 300 s") }
        Clock.sleep(1)
        let subscribed = wakeups(child.pid, seconds: seconds)
        let subscribedRSS = rss()
        say("  \(count) kept: connected in \(Format.number(connected - start)) s; RSS \(Format.number(idleRSS)) → \(Format.number(keptRSS)) → \(Format.number(subscribedRSS)) MiB; CPU \(Format.number(idle["cpu_percent"])) → \(Format.number(kept["cpu_percent"])) → \(Format.number(subscribed["cpu_percent"])) %")
        return ["adapters": adapters, "connected_s": connected - start, "idle_rss_mib": idleRSS, "kept_rss_mib": keptRSS, "subscribed_rss_mib": subscribedRSS,
                "idle_cpu_percent": idle["cpu_percent"] ?? 0, "kept_cpu_percent": kept["cpu_percent"] ?? 0,
                "subscribed_cpu_percent": subscribed["cpu_percent"] ?? 0, "kept_wakeups_per_s": kept["wakeups_per_s"] ?? 0,
                "subscribed_wakeups_per_s": subscribed["wakeups_per_s"] ?? 0]
    }

    // MARK: Scanning

    func scanCurve(seconds: Double) throws -> [String: Any] {
        let interval = Self.curveAdvertisingInterval
        // Each point measures the raw client and the gateway together.
        guard options.wants("curves", .gateway) || options.wants("curves", .raw) else { return ["x": "devices", "series": [:]] }
        var series: [String: [[String: Any]]] = [:]
        for advertisers in Self.curveAdvertisers {
            say("curve: scanning, \(advertisers) advertisers every \(interval) s")
            let measured = point("scan ×\(advertisers)") {
                let result = try scanPoint(advertisers: advertisers, interval: interval, duration: seconds, warmup: 2,
                                           tag: "curve-scan-\(advertisers)")
                return ["gateway": result.gateway, "raw": result.raw, "offered": result.offered]
            }
            if let error = measured["error"] {
                for subject in ["gateway", "raw"] { series[subject, default: []].append(["devices": advertisers, "error": error]) }
                continue
            }
            let gatewayResult = measured["gateway"] as? [String: Any] ?? [:], raw = measured["raw"] as? [String: Any] ?? [:]
            let offered = measured["offered"] as? [String: Any] ?? [:]
            series["gateway", default: []].append([
                "devices": advertisers, "events_per_s": gatewayResult.double("measured_rate"), "cpu_percent": cpu(gatewayResult, "gateway"),
                "offered_per_s": offered.double("rate"), "advertised_per_s": Double(advertisers) / interval,
            ])
            series["raw", default: []].append([
                "devices": advertisers, "events_per_s": raw.double("rate"), "cpu_percent": cpu(raw, "raw"),
                "advertised_per_s": Double(advertisers) / interval,
            ])
        }
        return ["x": "devices", "interval_s": interval, "series": series,
                "note": "The peer has no scan stream: no peer curve; raw: a libdbus client in the same discovery, alone"]
    }

    // MARK: Report

    private func cpu(_ result: [String: Any], _ process: String) -> Double {
        (result["cpu"] as? [String: Double])?[process] ?? 0
    }

    /// A row per point in report.md, under one section per curve drawn.
    func addCurveRows(_ all: [String: Any]) {
        func series(_ curve: String) -> [String: [[String: Any]]] {
            ((all[curve] as? [String: Any])?["series"] as? [String: [[String: Any]]]) ?? [:]
        }
        func value(_ curve: String, _ subject: String, _ key: String, _ x: String, _ at: Double) -> Double? {
            guard let entry = series(curve)[subject]?.first(where: { $0.double(x) == at }), entry["error"] == nil,
                entry[key] != nil
            else { return nil }
            return entry.double(key)
        }
        let seconds = Format.number(options.curveSeconds)
        for clients in Self.curveClients.map(Double.init) where all["reads"] != nil {
            let section = "Curve: REST reads against clients (\(seconds) s a point)"
            add(Row(section: section, metric: "\(Int(clients)) client(s): reads/s", gateway: value("reads", "gateway", "rps", "clients", clients),
                    peer: value("reads", "peer", "rps", "clients", clients), baseline: value("reads", "raw", "rps", "clients", clients),
                    unit: "req/s", better: .higher,
                    note: "p50: gateway \(Format.number(value("reads", "gateway", "p50_us", "clients", clients))) µs, peer \(Format.number(value("reads", "peer", "p50_us", "clients", clients))) µs, raw \(Format.number(value("reads", "raw", "p50_us", "clients", clients))) µs"))
        }
        for rate in Self.curveRates where all["notify"] != nil {
            let section = "Curve: CPU against the notification rate, one subscriber (\(seconds) s a point)"
            func lossNote(_ subject: String) -> String? {
                guard let entry = series("notify")[subject]?.first(where: { $0.double("rate") == rate }), entry["error"] == nil else { return nil }
                let lost = entry["lossless"] as? Bool == true ? nil : "\(subject) lost \(entry.int("lost"))"
                let slow = entry["emitter_kept_up"] as? Bool == false ? "the responder fell behind in \(subject)'s run" : nil
                let both = [lost, slow].compactMap { $0 }
                return both.isEmpty ? nil : both.joined(separator: ", ")
            }
            add(Row(section: section, metric: "CPU at \(Format.number(rate))/s", gateway: value("notify", "gateway", "cpu_percent", "rate", rate),
                    peer: value("notify", "peer", "cpu_percent", "rate", rate), baseline: value("notify", "raw", "cpu_percent", "rate", rate),
                    unit: "%", better: .lower, note: ["% of one core", lossNote("gateway"), lossNote("peer"), lossNote("raw")]
                        .compactMap { $0 }.joined(separator: "; ")))
        }
        for subscribers in Self.curveSubscribers.map(Double.init) where all["fanout"] != nil {
            let section = "Curve: events delivered against subscribers at \(Format.number(Self.curveFanoutRate)) values/s (\(seconds) s a point)"
            add(Row(section: section, metric: "\(Format.number(subscribers)) subscribers: delivered events/s",
                    gateway: value("fanout", "gateway", "delivered_rate", "subscribers", subscribers),
                    peer: value("fanout", "peer", "delivered_rate", "subscribers", subscribers), baseline: nil, unit: "/s", better: .higher,
                    note: "offered \(Format.number(subscribers * Self.curveFanoutRate))/s; not delivered: gateway \(Format.number(value("fanout", "gateway", "not_delivered", "subscribers", subscribers))), peer \(Format.number(value("fanout", "peer", "not_delivered", "subscribers", subscribers)))"))
        }
        for devices in Self.curveKeptDevices.map(Double.init) where all["kept"] != nil {
            let section = "Curve: kept devices with standing subscriptions (simulator; \(seconds) s a point)"
            add(Row(section: section, metric: "\(Format.number(devices)) kept, subscribed at 1 Hz: RSS",
                    gateway: value("kept", "gateway", "subscribed_rss_mib", "devices", devices), baseline: nil, unit: "MiB", better: .lower,
                    note: "kept, no subscriptions: \(Format.number(value("kept", "gateway", "kept_rss_mib", "devices", devices))) MiB; nothing kept: \(Format.number(value("kept", "gateway", "idle_rss_mib", "devices", devices))) MiB"))
            add(Row(section: section, metric: "\(Format.number(devices)) kept, subscribed at 1 Hz: CPU",
                    gateway: value("kept", "gateway", "subscribed_cpu_percent", "devices", devices), baseline: nil, unit: "%", better: .lower,
                    note: "kept, no subscriptions: \(Format.number(value("kept", "gateway", "kept_cpu_percent", "devices", devices))) %"))
        }
        for devices in Self.curveAdvertisers.map(Double.init) where all["scan"] != nil {
            let section = "Curve: scan events/s against advertisers in range, each every \(Self.curveAdvertisingInterval) s (\(seconds) s a point)"
            add(Row(section: section, metric: "\(Format.number(devices)) advertisers: events/s",
                    gateway: value("scan", "gateway", "events_per_s", "devices", devices), baseline: value("scan", "raw", "events_per_s", "devices", devices),
                    unit: "/s", better: .higher,
                    note: "CPU: gateway \(Format.number(value("scan", "gateway", "cpu_percent", "devices", devices))) %, raw \(Format.number(value("scan", "raw", "cpu_percent", "devices", devices))) %; offered in the gateway's window \(Format.number(value("scan", "gateway", "offered_per_s", "devices", devices)))/s"))
        }
    }

    /// Writes the points to curves.json and has scripts/bench-curves.py draw
    /// them: into Benchmarks/curves/ and BENCHMARKS.md's curve sections when
    /// the run may update BENCHMARKS.md, else into the run's directory.
    func drawCurves(_ all: [String: Any]) throws {
        let points = options.out + "/curves.json"
        try JSONValue.encode(all).write(toFile: points, atomically: true, encoding: .utf8)
        var arguments = [peerPython, options.root + "/scripts/bench-curves.py", "--points", points]
        if options.update {
            arguments += ["--charts", options.root + "/Benchmarks/curves", "--benchmarks", options.root + "/BENCHMARKS.md"]
        } else {
            arguments += ["--charts", options.out + "/curves"]
        }
        let child = try Child("bench-curves", arguments, cpu: nil, log: logs + "/bench-curves.log")
        let output = child.readRest(timeout: 120)
        child.wait(timeout: 5)
        guard child.exitStatus == 0 else {
            throw BenchError("scripts/bench-curves.py failed (see \(logs)/bench-curves.log): \(output.suffix(3).joined(separator: " | "))")
        }
        for line in output { say("  \(line)") }
    }
}
