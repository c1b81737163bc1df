import Foundation
import Glibc

/// The `state` phase: what the state store (`--state-dir`) costs and how
/// fast it restores.
///
/// 1. Notifications through the gateway with the store off (`--no-state`),
///    on (full durability, the default) and on with `--state-durability
///    normal`: CPU at 1 kHz and the highest rate with zero loss (every
///    value also goes to the event log, which the store commits in
///    batches). The store-on run leaves its event log behind, topped up to
///    the log's bound (100,000 events).
/// 2. On the simulator, 100 kept devices, each with a standing
///    subscription notifying once a second: the gateway's CPU and wake-ups
///    (context switches of all its threads) with all of them connected,
///    without and with the subscriptions; then restarts on that state
///    directory: SIGTERM and start (the links stay up), and a start after
///    bluetoothd restarted (every device to reconnect).
///
/// Runs after the main gateway stopped, on the main bus and responder.
extension Bench {
    static let keptDeviceCount = 100
    /// Connection slots for the kept devices on the simulator's one
    /// adapter, and quotas that let the harness (one client) keep them all.
    var keptSlots: [String] { ["--connection-slots", String(Self.keptDeviceCount)] + keepQuotas(Self.keptDeviceCount) }

    /// `serve` options raising the kept-device and standing-subscription
    /// quotas (16 and 128 a client by default) to `count`, for one client.
    func keepQuotas(_ count: Int) -> [String] {
        ["--max-kept-devices", "--max-subscriptions"].flatMap { [$0, String(count), $0 + "-per-client", "0"] }
    }
    static let storedEventTarget = 100_000

    func stateStore() throws {
        say("state store: notifications with the store off and on")
        let directory = options.out + "/state-dir"
        mkdir(directory, 0o700)
        let section = "State store: notifications through the gateway, store on vs off (--no-state)"
        var figures: [String: [String: Any]] = [:]
        // "on" is the default durability (full: every commit synced);
        // "normal" leaves the syncing to SQLite's checkpoints
        // (`--state-durability normal`), in a directory of its own.
        let normalDirectory = directory + "-normal"
        mkdir(normalDirectory, 0o700)
        let settings = [
            ("off", ["--no-state"]), ("on", ["--state-dir", directory]),
            ("normal", ["--state-dir", normalDirectory, "--state-durability", "normal"]),
        ]
        for (label, arguments) in settings {
            port = HTTPProbe.freePort()
            gateway = try startGateway(address, port: port, tag: "state-\(label)", extra: arguments)
            Clock.sleep(1)
            let at1k = try stream(clients: 1, rate: 1000, count: Int(1000 * options.duration), phase: "store \(label) 1 kHz")
            // Offered faster than a loaded machine may keep up with: what
            // arrives per second is the throughput, loss or not.
            let offered = try stream(clients: 1, rate: 10_000, count: Int(10_000 * options.duration), phase: "store \(label) 10 kHz")
            say("  store \(label): \(Format.number(offered.double("delivered_rate"))) events/s delivered of 10,000/s offered, CPU at 1 kHz \(Format.number((at1k["cpu"] as? [String: Double])?["gateway"])) %")
            let best = try highestLosslessRate(label: label, rates: [1000, 2000, 3000, 4000, 5000, 7000, 10_000, 14_000, 20_000, 28_000])
            var figure: [String: Any] = ["at_1khz": at1k, "offered_10khz": offered, "highest_lossless": best]
            if label == "on" {
                figure["stored_events"] = try fillEventLog(directory: directory)
            }
            figures[label] = figure
            gateway?.stop()
            gateway = nil
        }
        results["state_store"] = figures
        func cpuAt1kHz(_ label: String) -> Double? {
            ((figures[label]?["at_1khz"] as? [String: Any])?["cpu"] as? [String: Double])?["gateway"]
        }
        let off = figures["off"] ?? [:]
        // Each store setting beside the store off: "on" (full durability,
        // the default) and "normal".
        for (label, name) in [("on", "store on"), ("normal", "--state-durability normal")] {
            let measured = figures[label] ?? [:]
            add(Row(section: section, metric: "notification events/s delivered at 10,000/s offered, \(name) (gateway) vs off (baseline)",
                    gateway: (measured["offered_10khz"] as? [String: Any])?.double("delivered_rate"),
                    baseline: (off["offered_10khz"] as? [String: Any])?.double("delivered_rate"), unit: "/s", better: .higher,
                    note: "target: on ≥ 0.8 × off; every value also goes to the event log (and with the store, to SQLite)"))
            add(Row(section: section, metric: "highest notification rate with zero loss, \(name) (gateway) vs off (baseline)",
                    gateway: measured["highest_lossless"] as? Double, baseline: off["highest_lossless"] as? Double, unit: "/s",
                    better: .higher, note: "target: on ≥ 0.8 × off; 4 s steps"))
            add(Row(section: section, metric: "gateway CPU at 1 kHz, \(name) (gateway) vs off (baseline)", gateway: cpuAt1kHz(label),
                    baseline: cpuAt1kHz("off"), unit: "%", better: .lower, note: "% of one core"))
        }
        // % of a core at 1,000/s is 10 µs a notification per percent.
        for (label, durability) in [("off", "off"), ("on", "full"), ("normal", "normal")] {
            figure(.gateway, "notify1k.\(durability).cpu_per_notification_us", cpuAt1kHz(label).map { $0 * 10 })
        }
        try keptDevices(directory: directory)
    }

    /// The release gateway with `state` options, logging at info (the
    /// restore figures read its start-up lines); a restore of many kept
    /// devices may take longer than the usual start.
    func startGateway(_ address: String, port: Int, tag: String, extra: [String]) throws -> Child {
        try startGateway(address, port: port, tag: tag, state: extra, logLevel: "info", healthTimeout: 60)
    }

    /// Raises the rate until a 4 s step loses a value or builds a backlog
    /// (p99 beyond 100 ms) twice in a row (once may be another program's
    /// burst on this shared machine); the last rate without.
    func highestLosslessRate(label: String, rates: [Double]) throws -> Double {
        var best = 0.0
        for rate in rates {
            let count = Int(rate * 4)
            var lossless = false
            for _ in 0..<2 where !lossless {
                let result = try stream(clients: 1, rate: rate, count: count, phase: "store \(label) \(Int(rate))/s")
                lossless = result.int("lost") == 0 && result.int("out_of_order") == 0 && result.int("unique") == count
                    && result.int("closed_early") == 0 && result.double("p99_us") < 100_000
                say("  store \(label), \(Int(rate))/s: \(result.int("unique")) of \(count), p99 \(Format.number(result.double("p99_us"))) µs\(lossless ? "" : ", LOSS or backlog")")
            }
            guard lossless else { break }
            best = rate
        }
        return best
    }

    /// Emits notifications until the event log in `directory` holds its
    /// bound; returns how many it holds.
    func fillEventLog(directory: String) throws -> Int {
        var stored = storedEvents(directory)
        if stored < Self.storedEventTarget {
            let missing = Self.storedEventTarget - stored + 1000
            say("  filling the event log: \(missing) more notifications")
            _ = try stream(clients: 1, rate: 5000, count: missing, phase: "store fill")
            let deadline = Clock.seconds() + 30
            // The log holds between its bound and 5,000 fewer (it prunes in batches).
            let enough = min(stored + missing / 2, Self.storedEventTarget - 5_000)
            while storedEvents(directory) < enough, Clock.seconds() < deadline { Clock.sleep(0.2) }
            stored = storedEvents(directory)
        }
        say("  the event log holds \(stored) events")
        return stored
    }

    /// How many events the store in `directory` holds, read beside the
    /// gateway with the sqlite3 tool.
    func storedEvents(_ directory: String) -> Int {
        let child = try? Child(
            "sqlite3", ["/usr/bin/sqlite3", "-readonly", directory + "/blegateway.sqlite", "SELECT count(*) FROM events"],
            cpu: loadCPU, log: logs + "/sqlite3.log")
        return child.flatMap { $0.readRest(timeout: 30).first.flatMap { Int($0) } } ?? 0
    }

    // MARK: Kept devices

    func keptAddress(_ index: Int) -> String { String(format: "E0:00:00:00:00:%02X", index) }

    /// One connectable heart-rate sensor of a kept-devices scenario,
    /// notifying once a second (heard by `adapter` alone, when one is named).
    func keptSensorYAML(address: String, index: Int, adapter: String? = nil) -> String {
        var lines = ["  - address: \"\(address)\"", "    name: \"Kept \(index)\""]
        if let adapter { lines.append("    adapter: \(adapter)") }
        lines += [
            "    rssi: -50", "    advertising: { interval: 0.5, uuids: [\"180d\"] }", "    services:",
            "      - uuid: \"180d\"", "        characteristics:", "          - uuid: \"2a37\"", "            flags: [notify]",
            "            behaviour: { kind: heart-rate, bpm: 70, variation: 5, rate: 1 }",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    func keptDevices(directory: String) throws {
        let count = Self.keptDeviceCount
        say("state store: \(count) kept devices with standing subscriptions, restored")
        let (daemon, busAddress) = try startDaemon("kept")
        defer { daemon.stop() }
        let scenario = options.out + "/kept-devices.yaml"
        var yaml = "# \(count) connectable heart-rate sensors, notifying once a second\ntiming: 1\ndevices:\n"
        for index in 0..<count { yaml += keptSensorYAML(address: keptAddress(index), index: index) }
        try yaml.write(toFile: scenario, atomically: true, encoding: .utf8)
        var simulator = try startSimulator(busAddress, scenario: scenario, tag: "1")
        defer { simulator.stop() }
        let section = "State store: \(count) kept devices with a standing subscription each (simulator), \(Format.grouped(storedEvents(directory))) stored events"
        var figures: [String: Any] = [:]

        // Kept and subscribed for the first time.
        let keepPort = HTTPProbe.freePort()
        // One simulated adapter holds them all: its slots are the count, not
        // a real controller's 7.
        var first: Child? = try startGateway(
            busAddress, port: keepPort, tag: "kept-1", extra: ["--state-dir", directory] + keptSlots)
        let start = Clock.seconds()
        try curl(port: keepPort, (0..<count).map { ("PUT", "/v1/devices/\(keptAddress($0))/keep", nil) })
        let allConnected = waitUntil(port: keepPort, path: "/v1/kept-connections", field: "status", value: "connected", count: count, timeout: 300)
        figures["keep_all_connected_s"] = allConnected.map { $0 - start }
        say("  \(count) kept devices connected: \(allConnected.map { Format.number($0 - start) + " s" } ?? "NOT within 300 s")")
        Clock.sleep(2)
        let idle = wakeups(first!.pid, seconds: options.duration)
        figures["connected_idle"] = idle
        say("  all connected, nothing flowing: CPU \(Format.number(idle["cpu_percent"])) %, \(Format.number(idle["wakeups_per_s"])) wake-ups/s")
        try curl(port: keepPort, (0..<count).map {
            ("POST", "/v1/subscriptions", #"{"device":"\#(keptAddress($0))","characteristic":"2a37"}"#)
        })
        _ = waitUntil(port: keepPort, path: "/v1/subscriptions", field: "status", value: "active", count: count, timeout: 120)
        Clock.sleep(2)
        let flowing = wakeups(first!.pid, seconds: options.duration)
        figures["subscribed_100_per_s"] = flowing
        say("  \(count) standing subscriptions at 1 Hz: CPU \(Format.number(flowing["cpu_percent"])) %, \(Format.number(flowing["wakeups_per_s"])) wake-ups/s")
        first?.stop()
        first = nil
        let stored = storedEvents(directory)
        figures["stored_events"] = stored

        // SIGTERM left the links up: the restart finds them connected.
        let warm = try restore(busAddress, directory: directory, tag: "kept-2")
        figures["restore_links_up"] = warm
        // bluetoothd restarted meanwhile: every link is down, every device
        // to reconnect and resubscribe.
        simulator.stop()
        simulator = try startSimulator(busAddress, scenario: scenario, tag: "2")
        let cold = try restore(busAddress, directory: directory, tag: "kept-3")
        figures["restore_links_down"] = cold
        results["kept_devices"] = figures

        add(Row(section: section, metric: "gateway CPU, all \(count) connected, nothing flowing", gateway: idle["cpu_percent"],
                baseline: nil, unit: "%", better: .lower, note: "\(Format.number(idle["wakeups_per_s"])) wake-ups/s (context switches of all threads)"))
        add(Row(section: section, metric: "gateway CPU, \(count) standing subscriptions at 1 Hz each", gateway: flowing["cpu_percent"],
                baseline: nil, unit: "%", better: .lower, note: "\(Format.number(flowing["wakeups_per_s"])) wake-ups/s"))
        for (label, figure) in [("links up (after SIGTERM)", warm), ("links down (bluetoothd restarted too)", cold)] {
            add(Row(section: section, metric: "restore, \(label): start → /health 200", gateway: figure["health_s"].map { $0 * 1000 },
                    baseline: nil, unit: "ms", better: .lower, note: "\(Format.grouped(stored)) events in the store"))
            add(Row(section: section, metric: "restore, \(label): start → all \(count) kept-connected", gateway: figure["connected_s"],
                    baseline: nil, unit: "s", better: .lower))
            add(Row(section: section, metric: "restore, \(label): start → all \(count) subscriptions active", gateway: figure["subscribed_s"],
                    baseline: nil, unit: "s", better: .lower))
        }
    }

    func startSimulator(_ busAddress: String, scenario: String, tag: String) throws -> Child {
        let simulator = try Child("bluez-sim", [simulatorBinary, "--bus", busAddress, "--scenario", scenario, "--temporary-timeout", "3000"],
                                  cpu: loadCPU, log: logs + "/bluez-sim-kept-\(tag).log")
        guard simulator.readLine(timeout: 120, where: { $0.hasPrefix("bluez-sim: serving") }) != nil else {
            throw BenchError("bluez-sim did not start")
        }
        return simulator
    }

    /// Starts a gateway on `directory` and times it: to /health, to every
    /// kept device connected, to every standing subscription active.
    func restore(_ busAddress: String, directory: String, tag: String) throws -> [String: Double] {
        let port = HTTPProbe.freePort()
        let start = Clock.seconds()
        let child = try startGateway(busAddress, port: port, tag: tag, extra: ["--state-dir", directory] + keptSlots)
        defer { child.stop() }
        var figure: [String: Double] = ["health_s": Clock.seconds() - start]
        let count = Self.keptDeviceCount
        if let at = waitUntil(port: port, path: "/v1/kept-connections", field: "status", value: "connected", count: count, timeout: 300) {
            figure["connected_s"] = at - start
        }
        if let at = waitUntil(port: port, path: "/v1/subscriptions", field: "status", value: "active", count: count, timeout: 300) {
            figure["subscribed_s"] = at - start
        }
        say("  restore (\(tag)): /health \(Format.number((figure["health_s"] ?? 0) * 1000)) ms, all connected \(Format.number(figure["connected_s"])) s, all subscribed \(Format.number(figure["subscribed_s"])) s")
        return figure
    }

    /// Polls `path` (a JSON array) every `every` seconds until `count` of
    /// its objects have `field` == `value`; the time it did, or nil at the
    /// deadline.
    func waitUntil(port: Int, path: String, field: String, value: String, count: Int, timeout: Double, every: Double = 0.02) -> Double? {
        let deadline = Clock.seconds() + timeout
        while Clock.seconds() < deadline {
            if let response = HTTPProbe.get(port: port, path: path), response.status == 200,
                let array = try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [[String: Any]],
                array.filter({ $0[field] as? String == value }).count >= count
            {
                return Clock.seconds()
            }
            Clock.sleep(every)
        }
        return nil
    }

    /// Sends the requests with one curl (a `--next` between them) and
    /// checks that each answered 2xx.
    func curl(port: Int, _ requests: [(method: String, path: String, json: String?)]) throws {
        var arguments = ["/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}\\n"]
        for (index, request) in requests.enumerated() {
            if index > 0 { arguments += ["--next", "-s", "-o", "/dev/null", "-w", "%{http_code}\\n"] }
            arguments += ["-X", request.method]
            if let json = request.json { arguments += ["-H", "Content-Type: application/json", "--data", json] }
            arguments.append("http://127.0.0.1:\(port)\(request.path)")
        }
        let child = try Child("curl", arguments, cpu: loadCPU, log: logs + "/curl.log")
        let codes = child.readRest(timeout: 120)
        let failed = codes.filter { !$0.hasPrefix("2") }
        guard codes.count == requests.count, failed.isEmpty else {
            throw BenchError("\(requests.first?.method ?? "") requests failed: \(failed.prefix(5)) (\(codes.count) answers)")
        }
    }

    /// The CPU (% of one core) and the context switches per second of all
    /// of `pid`'s threads over `seconds`: how often the gateway wakes up.
    /// Counted per thread, over the threads alive at both ends (a thread
    /// that ends takes its count with it).
    func wakeups(_ pid: pid_t, seconds: Double) -> [String: Double] {
        func switches() -> [String: Double] {
            var counts: [String: Double] = [:]
            for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
                for line in (ProcStats.read("/proc/\(pid)/task/\(task)/status") ?? "").split(separator: "\n")
                where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    counts[task, default: 0] += Double(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                }
            }
            return counts
        }
        let cpuBefore = ProcStats.cpuSeconds(pid) ?? 0
        let before = switches()
        let start = Clock.seconds()
        Clock.sleep(seconds)
        let after = switches()
        let elapsed = Clock.seconds() - start
        let cpu = ((ProcStats.cpuSeconds(pid) ?? 0) - cpuBefore) / elapsed * 100
        let woken = after.reduce(0.0) { total, entry in total + entry.value - (before[entry.key] ?? 0) }
        return ["cpu_percent": (cpu * 10).rounded() / 10, "wakeups_per_s": (woken / elapsed).rounded(),
                "threads": Double(after.count)]
    }
}
