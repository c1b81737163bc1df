import Foundation
import Glibc

extension Bench {
    // MARK: Startup

    func startupBaseline() throws {
        var times: [Double] = []
        for _ in 0..<5 {
            let start = Clock.seconds()
            let child = try Child("dbus-floor", [tool("dbus-floor"), "startup", "--bus", address], cpu: gatewayCPU, log: "/dev/null")
            guard child.readLine(timeout: 10, where: { $0 == "ready" }) != nil else { throw BenchError("dbus-floor startup failed") }
            times.append((Clock.seconds() - start) * 1000)
            child.wait(timeout: 5)
        }
        baseline["startup"] = ["ms": median(times), "runs": times]
    }

    /// Five starts of each contender, alternating, alone on the bus: from
    /// the process's start to its first 200 on /health (and, for the
    /// gateway, to its adapters listed). The gateway starts twice a round:
    /// as it restarts (its state directory made by an earlier start, as
    /// every start but its first finds it), which the target is about, and
    /// as it starts the first time (a new directory, in which it creates
    /// its state store).
    func startup() throws {
        say("startup (5 runs each, alternating)")
        try use(.raw)
        let contenders = contenders(for: "startup")
        let restartState = ["--state-dir", options.out + "/state-startup-restart"]
        if contenders.contains(.gateway) {
            try startGateway(address, port: HTTPProbe.freePort(), tag: "startup-restart", state: restartState).stop()
        }
        var restart: [Double] = [], first: [Double] = [], peer: [Double] = [], adapters: [Double] = []
        /// Starts one, times its first 200 (and, if asked, its adapters
        /// listed), and stops it.
        func timed(listingAdapters: Bool = false, _ start: (Int) throws -> Child) throws -> (health: Double, adapters: Double?) {
            let port = HTTPProbe.freePort()
            let started = Clock.seconds()
            let child = try start(port)
            defer { child.stop() }
            let health = (Clock.seconds() - started) * 1000
            guard listingAdapters else { return (health, nil) }
            while Clock.seconds() - started < 20 {
                if let response = HTTPProbe.get(port: port, path: "/v1/adapters"), response.status == 200,
                    response.body.contains("\"hci0\"")
                {
                    break
                }
                Clock.sleep(0.002)
            }
            return (health, (Clock.seconds() - started) * 1000)
        }
        for run in 0..<5 {
            for subject in contenders {
                if subject == .gateway {
                    let again = try timed(listingAdapters: true) {
                        try startGateway(address, port: $0, tag: "startup-restart-\(run)", state: restartState)
                    }
                    restart.append(again.health)
                    if let listed = again.adapters { adapters.append(listed) }
                    first.append(try timed { try startGateway(address, port: $0, tag: "startup-\(run)") }.health)
                } else {
                    peer.append(try timed { try startPeer(address, port: $0, tag: "startup-\(run)") }.health)
                }
            }
        }
        let floor = baseline["startup"]?.double("ms")
        results["startup"] = ["health_ms": restart, "first_start_health_ms": first, "adapters_ms": adapters, "peer_health_ms": peer,
                              "floor_ms": baseline["startup"]?["runs"] ?? []]
        let gatewayHealth = restart.isEmpty ? nil : median(restart), peerHealth = peer.isEmpty ? nil : median(peer)
        let firstHealth = first.isEmpty ? nil : median(first)
        figure(.gateway, "startup_ms", gatewayHealth)
        figure(.gateway, "first_startup_ms", firstHealth)
        figure(.peer, "startup_ms", peerHealth)
        figure(.raw, "startup_ms", floor)
        func runs(_ values: [Double]) -> String { values.map { Format.number($0) }.joined(separator: ", ") }
        add(Row(section: "Startup", metric: "process start → first 200 on /health, a restart (median of 5)", gateway: gatewayHealth,
                peer: peerHealth, baseline: floor, unit: "ms", better: .lower,
                note: "baseline: a libdbus client connects, adds its match rule and reads GetManagedObjects; the gateway with the state directory of an earlier start; runs: gateway \(runs(restart)) ms; peer \(runs(peer)) ms"))
        if let firstHealth {
            add(Row(section: "Startup", metric: "process start → first 200 on /health, the first start (median of 5)",
                    gateway: firstHealth, baseline: floor, unit: "ms", better: .lower,
                    note: "a new state directory: the gateway creates its state store; runs: \(runs(first)) ms"))
        }
        if !adapters.isEmpty {
            add(Row(section: "Startup", metric: "process start → adapters listed by GET /v1/adapters, a restart (median of 5)",
                    gateway: median(adapters), baseline: floor, unit: "ms", better: .lower, note: ""))
        }
    }

    // MARK: D-Bus economy

    /// Exact D-Bus message counts of the subject, from dbus-monitor on the
    /// private bus: messages it sent, messages addressed to it, and
    /// broadcast signals its match rules (read from the bus daemon) deliver
    /// to it; divided by the ReadValue calls it made / the notifications
    /// emitted.
    func economy(subject: Subject) throws {
        say("D-Bus economy (\(subject.rawValue))")
        // Its output goes to a file: through a pipe nobody reads during the
        // test it would block (and lose messages) once the pipe is full.
        let capture = logs + "/dbus-monitor-\(subject == .gateway ? "gateway" : "raw").txt"
        let monitor = try Child(
            "dbus-monitor", ["/bin/sh", "-c", "exec /usr/bin/stdbuf -oL /usr/bin/dbus-monitor --address \"$0\" --profile > \"$1\"", address, capture],
            cpu: loadCPU, log: logs + "/dbus-monitor.log")
        let ready = Clock.seconds() + 10
        while !(ProcStats.read(capture) ?? "").contains("in_reply_to"), Clock.seconds() < ready { Clock.sleep(0.05) }
        Clock.sleep(0.3)
        let responderName = try uniqueName(pid: responder?.pid ?? 0)
        let reads = 200, notifications = 1000
        var subjectName: String?
        var rules: [String] = []
        let t0 = Date().timeIntervalSince1970
        if subject == .gateway {
            for _ in 0..<reads {
                guard HTTPProbe.get(port: port, path: Self.readPath)?.status == 200 else { throw BenchError("a read failed") }
            }
        } else {
            _ = try runTool("dbus-floor", [tool("dbus-floor"), "read", "--bus", address, "--duration", "0.3", "--warmup", "0"],
                            cpu: gatewayCPU, timeout: 20)
        }
        Clock.sleep(0.3)
        let t1 = Date().timeIntervalSince1970
        let receiver: Child
        if subject == .gateway {
            receiver = try Child("sse-load", [tool("sse-load"), "stream", "--port", String(port), "--path", Self.notifyPath,
                                              "--clients", "1", "--count", String(notifications), "--idle-ms", "2000"],
                                 cpu: loadCPU, log: logs + "/sse-load.log")
            subjectName = try uniqueName(pid: gateway?.pid ?? 0)
        } else {
            receiver = try Child("dbus-floor", [tool("dbus-floor"), "listen", "--bus", address, "--count", String(notifications),
                                                "--idle-ms", "2000"], cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        }
        guard receiver.readLine(timeout: 20, where: { $0.hasPrefix("ready") }) != nil else { throw BenchError("receiver not ready") }
        if subject == .raw { subjectName = try uniqueName(pid: receiver.pid) }
        guard let name = subjectName else { throw BenchError("no unique name") }
        rules = try matchRules(of: name)
        Clock.sleep(0.3)
        let t2 = Date().timeIntervalSince1970
        _ = try emit(rate: 1000, count: notifications)
        let delivered = try receiver.resultJSON(timeout: 30)
        Clock.sleep(0.3)
        let t3 = Date().timeIntervalSince1970
        Clock.sleep(0.3)
        monitor.stop()
        let lines = (ProcStats.read(capture) ?? "").split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }

        // In the read window, the raw client is whoever called ReadValue.
        let readWindow = lines.filter { ($0.count > 1 ? Double($0[1]) ?? 0 : 0) >= t0 && (Double($0[1]) ?? 0) < t1 }
        let reader = subject == .gateway
            ? name : readWindow.first { $0.count > 7 && $0[0] == "mc" && $0[7] == "ReadValue" }?[3] ?? "?"
        let readerRules = subject == .gateway ? rules : []
        let calls = readWindow.filter { $0.count > 7 && $0[0] == "mc" && $0[3] == reader && $0[7] == "ReadValue" }.count
        let readCount = count(readWindow, subject: reader, rules: readerRules, responder: responderName)
        let notifyWindow = lines.filter { ($0.count > 1 ? Double($0[1]) ?? 0 : 0) >= t2 && (Double($0[1]) ?? 0) < t3 }
        let notifyCount = count(notifyWindow, subject: name, rules: rules, responder: responderName)
        let entry: [String: Any] = [
            "name": name, "match_rules": rules, "read_calls": calls, "read_messages": readCount.total,
            "read_sent": readCount.sent, "read_received": readCount.received, "read_other": readCount.other,
            "notifications": notifications, "notification_messages": notifyCount.total, "notification_sent": notifyCount.sent,
            "delivered": delivered.int(subject == .gateway ? "notifications" : "unique"),
        ]
        if subject == .raw {
            baseline["economy"] = entry
            return
        }
        results["economy"] = ["gateway": entry, "baseline": baseline["economy"] ?? [:]]
        let raw = baseline["economy"]
        let rawPerRead = raw.map { $0.double("read_messages") / max(1, $0.double("read_calls")) }
        let rawPerNotification = raw.map { $0.double("notification_messages") / max(1, $0.double("notifications")) }
        add(Row(section: "D-Bus economy (exact counts)", metric: "D-Bus messages per REST read",
                gateway: Double(readCount.total) / Double(max(1, calls)), baseline: rawPerRead, unit: "", better: .lower,
                note: "\(calls) reads: \(readCount.sent) sent, \(readCount.received) received (ReadValue, its reply, and the PropertiesChanged(Value) bluetoothd emits after every read)"))
        add(Row(section: "D-Bus economy (exact counts)", metric: "D-Bus messages per notification",
                gateway: Double(notifyCount.total) / Double(notifications), baseline: rawPerNotification, unit: "", better: .lower,
                note: "\(notifications) notifications: \(notifyCount.sent) sent by the gateway; its \(rules.count) match rules (in report.json) include \(rules.filter { !$0.contains("NameOwnerChanged") }.joined(separator: "; "))"))
    }

    private func count(_ lines: [[String]], subject: String, rules: [String], responder: String)
        -> (total: Int, sent: Int, received: Int, other: Int)
    {
        var sent = 0, received = 0, other = 0
        for fields in lines where fields.count > 4 {
            let (type, sender, destination) = (fields[0], fields[3], fields[4])
            if sender == subject {
                if destination == responder || destination == "org.bluez" { sent += 1 } else { other += 1 }
            } else if destination == subject {
                if sender == responder { received += 1 } else { other += 1 }
            } else if type == "sig", destination == "<none>", sender == responder,
                rules.contains(where: { Self.rule($0, matches: fields, responder: responder) })
            {
                received += 1
            }
        }
        return (sent + received, sent, received, other)
    }

    /// Whether a match rule (`key='value',...`) matches a broadcast signal
    /// from the responder; arg matches are not evaluated (none of the rules
    /// involved use them on the responder's signals).
    static func rule(_ rule: String, matches fields: [String], responder: String) -> Bool {
        for pair in rule.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = String(parts[0]), value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            switch key {
            case "type": if value != "signal" { return false }
            case "sender": if value != "org.bluez" && value != responder { return false }
            case "path": if fields.count > 5, fields[5] != value { return false }
            case "path_namespace": if fields.count > 5, !(fields[5] == value || fields[5].hasPrefix(value + "/")) { return false }
            case "interface": if fields.count > 6, fields[6] != value { return false }
            case "member": if fields.count > 7, fields[7] != value { return false }
            default: if key.hasPrefix("arg") { return false }
            }
        }
        return true
    }

    func uniqueName(pid: pid_t) throws -> String {
        let child = try Child("busctl", ["/usr/bin/busctl", "--address=\(address)", "--json=short", "list"], cpu: nil, log: logs + "/busctl.log")
        let text = child.readRest(timeout: 10).joined()
        for case let entry as [String: Any] in JSONValue.parseArray(text) ?? [] {
            if let name = entry["name"] as? String, name.hasPrefix(":"), entry.int("pid") == Int(pid) { return name }
        }
        throw BenchError("no bus name for pid \(pid)")
    }

    func matchRules(of name: String) throws -> [String] {
        let child = try Child(
            "busctl",
            ["/usr/bin/busctl", "--address=\(address)", "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.Debug.Stats", "GetAllMatchRules"], cpu: nil, log: logs + "/busctl.log")
        let text = child.readRest(timeout: 10).joined()
        guard let object = JSONValue.parseObject(text), let data = object["data"] as? [Any],
            let table = data.first as? [String: Any]
        else { return [] }
        return table[name] as? [String] ?? []
    }

    // MARK: REST

    func restBaseline() throws {
        say("raw ReadValue round trips")
        for inflight in [1, 16] {
            baseline["read\(inflight)"] = try rawRead(inflight: inflight, duration: options.duration)
        }
    }

    /// dbus-floor's ReadValue round trips with `inflight` calls outstanding,
    /// 2 s of warm-up then `duration` s measured; its JSON result with the
    /// CPU of every process of ours in the window.
    func rawRead(inflight: Int, duration: Double) throws -> [String: Any] {
        let child = try Child("dbus-floor", [tool("dbus-floor"), "read", "--linger", "1", "--bus", address, "--inflight", String(inflight),
                                             "--duration", String(duration), "--warmup", "2"],
                              cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        Clock.sleep(2)
        let cpu = window([("raw", child.pid)])
        var result = try child.resultJSON(timeout: duration + 30)
        let usage = cpu.finish()
        child.finish()
        result["cpu"] = usage
        record("raw ReadValue ×\(inflight)", usage)
        return result
    }

    /// wrk against each contender's read, 1 connection then 16, gateway and
    /// peer alternating; then GET /health on the gateway as a reference for
    /// its HTTP layer.
    func reads() throws {
        let script = try wrkScript()
        let contenders = contenders(for: "read")
        var figures: [Subject: [String: Any]] = [:]
        for clients in [1, 16] {
            for subject in contenders {
                try use(subject)
                let target = endpoint(subject)
                figures[subject, default: [:]]["read\(clients)"] =
                    try wrk(script: script, port: target.port, path: target.readPath, clients: clients, label: "\(subject.rawValue) read")
            }
        }
        if contenders.contains(.gateway) {
            try use(.gateway)
            for clients in [1, 16] {
                figures[.gateway, default: [:]]["health\(clients)"] =
                    try wrk(script: script, port: port, path: "/health", clients: clients, label: "gateway health")
            }
        }
        results["rest"] = ["gateway": figures[.gateway] ?? [:], "peer": figures[.peer] ?? [:],
                           "baseline": ["read1": baseline["read1"] ?? [:], "read16": baseline["read16"] ?? [:]]]
        for clients in [1, 16] {
            let gateway = figures[.gateway]?["read\(clients)"] as? [String: Any]
            let peer = figures[.peer]?["read\(clients)"] as? [String: Any]
            let raw = baseline["read\(clients)"]
            let section = "REST read (GET …/characteristics/fff1/value; the peer's GET /read) vs raw ReadValue"
            let who = clients == 1 ? "1 client (sequential)" : "16 concurrent clients (16 in flight)"
            func perRead(_ result: [String: Any]?, _ process: String) -> Double? {
                guard let result, let cpu = result["cpu"] as? [String: Double], let used = cpu[process] else { return nil }
                return used * 10_000 / max(1, result.double("rps"))
            }
            for (subject, result) in [(Subject.gateway, gateway), (.peer, peer), (.raw, raw)] {
                guard let result else { continue }
                figure(subject, "read\(clients).p50_us", result.double("p50_us"))
                figure(subject, "read\(clients).p99_us", result.double("p99_us"))
                figure(subject, "read\(clients).rps", result.double("rps"))
                figure(subject, "read\(clients).cpu_per_read_us", perRead(result, subject.rawValue))
            }
            add(Row(section: section, metric: "p50 latency, \(who)", gateway: gateway?.double("p50_us"), peer: peer?.double("p50_us"),
                    baseline: raw?.double("p50_us"), unit: "µs", better: .lower))
            add(Row(section: section, metric: "p99 latency, \(who)", gateway: gateway?.double("p99_us"), peer: peer?.double("p99_us"),
                    baseline: raw?.double("p99_us"), unit: "µs", better: .lower))
            let cpu = gateway?["cpu"] as? [String: Double] ?? [:]
            let peerCPU = peer?["cpu"] as? [String: Double] ?? [:]
            let rawCPU = raw?["cpu"] as? [String: Double] ?? [:]
            add(Row(section: section, metric: "throughput, \(who)", gateway: gateway?.double("rps"), peer: peer?.double("rps"),
                    baseline: raw?.double("rps"), unit: "req/s", better: .higher,
                    note: "CPU: gateway \(cpu["gateway"] ?? 0)%, peer \(peerCPU["peer"] ?? 0)%, responder \(cpu["responder"] ?? 0)% (peer run: \(peerCPU["responder"] ?? 0)%, raw run: \(rawCPU["responder"] ?? 0)%), dbus-daemon \(cpu["dbus-daemon"] ?? 0)%, wrk \(cpu["wrk"] ?? 0)%"))
            add(Row(section: section, metric: "CPU per read, \(who)", gateway: perRead(gateway, "gateway"), peer: perRead(peer, "peer"),
                    baseline: perRead(raw, "raw"), unit: "µs", better: .lower,
                    note: "CPU time of the gateway (the peer's; the raw client's) per request"))
        }
        for clients in [1, 16] {
            guard let health = figures[.gateway]?["health\(clients)"] as? [String: Any] else { continue }
            add(Row(section: "HTTP only (GET /health, no D-Bus): a reference for the HTTP layer's share",
                    metric: "throughput, \(clients) client(s)", gateway: health.double("rps"), baseline: nil, unit: "req/s",
                    better: .higher, note: "p50 \(Format.number(health.double("p50_us"))) µs, p99 \(Format.number(health.double("p99_us"))) µs"))
        }
    }

    /// Writes the Lua script that makes wrk print its result as JSON; its path.
    func wrkScript() throws -> String {
        let script = options.out + "/wrk-report.lua"
        try """
            -- Prints wrk's result as one JSON line (latencies in microseconds).
            done = function(summary, latency, requests)
              local e = summary.errors
              io.write(string.format('{"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,"p50_us":%.1f,"p90_us":%.1f,"p99_us":%.1f,"p999_us":%.1f,"max_us":%.1f}\\n',
                summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
                latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
            end

            """.write(toFile: script, atomically: true, encoding: .utf8)
        return script
    }

    /// wrk: 2 s of warm-up, then one measured window; its JSON result with
    /// `rps` and the CPU of every process of ours in the window.
    func wrk(script: String, port: Int, path: String, clients: Int, label: String, duration: Double? = nil) throws -> [String: Any] {
        let duration = duration ?? options.duration
        say("wrk \(label), \(clients) connection(s)")
        let url = "http://127.0.0.1:\(port)\(path)"
        _ = try runTool("wrk", ["/usr/bin/wrk", "-t1", "-c\(clients)", "-d2s", "-s", script, url], cpu: loadCPU, timeout: 30)
        let child = try Child("wrk", ["/usr/bin/wrk", "-t1", "-c\(clients)", "-d\(Int(duration))s", "-s", script, url],
                              cpu: loadCPU, log: logs + "/wrk.log")
        let cpu = window([("wrk", child.pid)])
        // wrk cannot linger: the window closes just before it ends.
        Clock.sleep(duration - 0.3)
        let usage = cpu.finish()
        var result = try child.resultJSON(timeout: duration + 30)
        result["cpu"] = usage
        result["rps"] = result.double("requests") / (result.double("duration_us") / 1e6)
        record("GET \(label) ×\(clients)", usage)
        if result.int("errors") + result.int("non2xx") > 0 {
            notes.append("wrk \(label) ×\(clients): \(result.int("errors")) socket errors, \(result.int("non2xx")) non-2xx responses.")
        }
        return result
    }

    // MARK: Notifications

    func notifyBaseline() throws {
        say("raw signal receiver at 1 kHz")
        let count = Int(1000 * options.duration)
        let child = try Child("dbus-floor", [tool("dbus-floor"), "listen", "--linger", "1", "--bus", address, "--count", String(count), "--idle-ms", "2000"],
                              cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        guard child.readLine(timeout: 20, where: { $0 == "ready" }) != nil else { throw BenchError("dbus-floor listen not ready") }
        let idleRSS = ProcStats.memory(child.pid)?.rss ?? 0
        let cpu = window([("raw", child.pid)])
        let emitted = try emit(rate: 1000, count: count)
        var result = try child.resultJSON(timeout: 30)
        let usage = cpu.finish()
        child.finish()
        result["cpu"] = usage
        result["emit_seconds"] = emitted.seconds
        record("raw receiver 1 kHz", usage)
        baseline["notify1k"] = result
        baseline["rss"] = ["kib": idleRSS]
        try ladder(subject: .raw, rates: Self.ladderRates)
    }

    /// The rates the zero-loss ladder climbs.
    static let ladderRates: [Double] = [2000, 5000, 10_000, 20_000, 50_000, 100_000]

    /// One subscriber at 1 kHz on each contender, alternating; then each
    /// one's highest zero-loss rate.
    func notifications() throws {
        let contenders = contenders(for: "notify")
        let count = Int(1000 * options.duration)
        var at1k: [Subject: [String: Any]] = [:]
        for subject in contenders {
            say("notifications through the \(subject.rawValue) at 1 kHz")
            try use(subject)
            at1k[subject] = try stream(subject, clients: 1, rate: 1000, count: count, phase: "\(subject.rawValue) 1 kHz")
        }
        let raw = baseline["notify1k"]
        results["notify1k"] = ["gateway": at1k[.gateway] ?? [:], "peer": at1k[.peer] ?? [:], "baseline": raw ?? [:]]
        // The peer starts lower: a Python gateway may not sustain 2 kHz.
        let best = try ladders(contenders.map { ($0, $0 == .peer ? [1000] + Self.ladderRates : Self.ladderRates) })
        let gateway = at1k[.gateway], peer = at1k[.peer]
        func cpu(_ result: [String: Any]?, _ process: String) -> Double? {
            (result?["cpu"] as? [String: Double])?[process]
        }
        /// µs of CPU per notification: % of a core × 10,000 ÷ notifications/s.
        func perNotification(_ result: [String: Any]?, _ process: String) -> Double? {
            cpu(result, process).map { $0 * 10_000 / 1000 }
        }
        for (subject, result) in [(Subject.gateway, gateway), (.peer, peer), (.raw, raw)] {
            guard let result else { continue }
            figure(subject, "notify1k.p50_us", result.double("p50_us"))
            figure(subject, "notify1k.lost", result.double("lost"))
            figure(subject, "notify1k.cpu_per_notification_us", perNotification(result, subject.rawValue))
        }
        figure(.gateway, "notify.best_rate", best[.gateway]?.rate)
        figure(.peer, "notify.best_rate", best[.peer]?.rate)
        figure(.raw, "notify.best_rate", baseline["ladder"]?.double("best"))
        let section = "Notification path: value emitted → SSE event received (vs raw D-Bus signal receiver)"
        add(Row(section: section, metric: "p50 latency at 1 kHz", gateway: gateway?.double("p50_us"), peer: peer?.double("p50_us"),
                baseline: raw?.double("p50_us"), unit: "µs", better: .lower,
                note: [gateway.map { "gateway: \($0.int("notifications")) of \(count) received, \($0.int("lost")) lost" },
                       peer.map { "peer: \($0.int("notifications")) of \(count) received, \($0.int("lost")) lost" }]
                    .compactMap { $0 }.joined(separator: "; ")))
        add(Row(section: section, metric: "p99 latency at 1 kHz", gateway: gateway?.double("p99_us"), peer: peer?.double("p99_us"),
                baseline: raw?.double("p99_us"), unit: "µs", better: .lower))
        add(Row(section: section, metric: "CPU at 1 kHz", gateway: cpu(gateway, "gateway"), peer: cpu(peer, "peer"),
                baseline: cpu(raw, "raw"), unit: "%", better: .lower, note: "% of one core; each contender vs the raw receiver"))
        add(Row(section: section, metric: "CPU per notification at 1 kHz", gateway: perNotification(gateway, "gateway"),
                peer: perNotification(peer, "peer"), baseline: perNotification(raw, "raw"), unit: "µs", better: .lower,
                note: "CPU time of the process per notification delivered"))
        // CPU per notification again at the highest rate both sustained,
        // where fixed costs (timers, heartbeats) weigh less.
        let steps = { (key: String) in (self.results[key] as? [String: Any])?["steps"] as? [[String: Any]] ?? [] }
        let gatewaySteps = steps("ladder_gateway"), peerSteps = steps("ladder_peer")
        let common = gatewaySteps.filter { $0["lossless"] as? Bool == true }.map { $0.double("rate") }
            .filter { rate in peerSteps.contains { $0.double("rate") == rate && $0["lossless"] as? Bool == true } }.max()
        if let common {
            func at(_ steps: [[String: Any]], _ process: String) -> Double? {
                steps.first { $0.double("rate") == common }.flatMap { cpu($0, process) }.map { $0 * 10_000 / common }
            }
            let rawStep = steps("ladder_baseline").first { $0.double("rate") == common }
            figure(.gateway, "notify.common.cpu_per_notification_us", at(gatewaySteps, "gateway"))
            figure(.peer, "notify.common.cpu_per_notification_us", at(peerSteps, "peer"))
            figures["notify.common_rate"] = common
            add(Row(section: section, metric: "CPU per notification at \(Format.number(common))/s (the highest rate both sustained)",
                    gateway: at(gatewaySteps, "gateway"), peer: at(peerSteps, "peer"),
                    baseline: rawStep.flatMap { cpu($0, "raw") }.map { $0 * 10_000 / common }, unit: "µs", better: .lower))
        }
        add(Row(section: section, metric: "highest sustained rate with zero loss (4 s steps)", gateway: best[.gateway]?.rate,
                peer: best[.peer]?.rate, baseline: baseline["ladder"]?.double("best"), unit: "/s", better: .higher,
                note: [best[.gateway]?.note, best[.peer]?.note, baseline["ladder"]?["note"] as? String]
                    .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")))
    }

    /// One run of `clients` SSE streams of the notifying characteristic on
    /// `subject` while the responder emits `count` values at `rate`; what
    /// has not arrived `grace` seconds after the emission ends is lost.
    func stream(_ subject: Subject, clients: Int, rate: Double, count: Int, phase: String, grace: Double = 15) throws -> [String: Any] {
        let target = endpoint(subject)
        let child = try Child("sse-load", [tool("sse-load"), "stream", "--linger", "1", "--port", String(target.port),
                                           "--path", target.notifyPath, "--clients", String(clients), "--count", String(count),
                                           "--idle-ms", "3000", "--timeout-ms", String(Int((Double(count) / rate * 2 + grace) * 1000))],
                              cpu: loadCPU, log: logs + "/sse-load.log")
        guard child.readLine(timeout: 120, where: { $0.hasPrefix("ready") }) != nil else { throw BenchError("sse-load not ready") }
        let cpu = window([("sse-load", child.pid)])
        let emitted = try emit(rate: rate, count: count)
        var result = try child.resultJSON(timeout: Double(count) / rate * 2 + grace + 60)
        let usage = cpu.finish()
        child.finish()
        result["cpu"] = usage
        result["emit_seconds"] = emitted.seconds
        let pid = process(subject)?.pid ?? 0
        result["\(subject.rawValue)_rss_kib"] = ProcStats.memory(pid)?.rss ?? 0
        result["\(subject.rawValue)_peak_rss_kib"] = ProcStats.memory(pid)?.peak ?? 0
        record(phase, usage)
        return result
    }

    /// The same on the gateway.
    func stream(clients: Int, rate: Double, count: Int, phase: String) throws -> [String: Any] {
        try stream(.gateway, clients: clients, rate: rate, count: count, phase: phase)
    }

    func rawListen(rate: Double, count: Int) throws -> [String: Any] {
        let child = try Child("dbus-floor", [tool("dbus-floor"), "listen", "--linger", "1", "--bus", address, "--count", String(count), "--idle-ms", "3000"],
                              cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        guard child.readLine(timeout: 20, where: { $0 == "ready" }) != nil else { throw BenchError("dbus-floor listen not ready") }
        let cpu = window([("raw", child.pid)])
        let emitted = try emit(rate: rate, count: count)
        var result = try child.resultJSON(timeout: Double(count) / rate * 4 + 60)
        result["cpu"] = cpu.finish()
        child.finish()
        result["emit_seconds"] = emitted.seconds
        return result
    }

    /// One subject's highest zero-loss rate (see `ZeroLossLadder`); each
    /// step sends 4 s of values.
    @discardableResult
    func ladder(subject: Subject, rates: [Double]) throws -> (rate: Double, note: String) {
        try ladders([(subject, rates)])[subject] ?? (0, "")
    }

    /// Several subjects' zero-loss ladders, their steps taken in turn, so
    /// that the machine's noise hits each alike.
    func ladders(_ plans: [(Subject, [Double])]) throws -> [Subject: (rate: Double, note: String)] {
        say("highest zero-loss rate (\(plans.map(\.0.rawValue).joined(separator: ", ")))")
        var searches = plans.map { (subject: $0.0, ladder: ZeroLossLadder(rates: $0.1), steps: [[String: Any]]()) }
        while searches.contains(where: { $0.ladder.next != nil }) {
            for index in searches.indices {
                guard let rate = searches[index].ladder.next else { continue }
                let subject = searches[index].subject
                try use(subject)
                let count = Int(rate * 4)
                var result = subject == .raw
                    ? try rawListen(rate: rate, count: count)
                    : try stream(subject, clients: 1, rate: rate, count: count, phase: "\(subject.rawValue) \(Int(rate))/s")
                let received = result.int("unique")
                // Sustained: nothing lost, and no backlog building up (a queue
                // in the bus daemon or the gateway shows as a p99 beyond 100 ms).
                let sustained = result.int("lost") == 0 && result.int("out_of_order") == 0 && received == count
                    && result.int("closed_early") == 0 && result.double("p99_us") < 100_000
                let emitterKeptUp = result.double("emit_seconds") <= Double(count) / rate * 1.1 + 0.05
                result["rate"] = rate
                result["lossless"] = sustained
                result["emitter_kept_up"] = emitterKeptUp
                searches[index].steps.append(result)
                searches[index].ladder.record(rate: rate, sustained: sustained, emitterKeptUp: emitterKeptUp)
                if subject == .raw { baseline["rate\(Int(rate))"] = result }
                say("  \(subject.rawValue) \(Int(rate))/s: \(received) of \(count)\(sustained ? "" : ", LOSS or backlog") p99 \(Format.number(result.double("p99_us"))) µs\(emitterKeptUp ? "" : " (responder could not keep the rate)")")
            }
        }
        var outcome: [Subject: (rate: Double, note: String)] = [:]
        for search in searches {
            let (subject, best, note) = (search.subject, search.ladder.good ?? 0, search.ladder.note)
            let key = subject == .raw ? "ladder_baseline" : "ladder_\(subject.rawValue)"
            results[key] = ["best": best, "steps": search.steps, "note": note]
            let who = ["raw": "Raw:", "gateway": "Gateway:", "peer": "Peer:"][subject.rawValue] ?? ""
            if subject == .raw { baseline["ladder"] = ["best": best, "note": note.isEmpty ? "" : who + note] }
            outcome[subject] = (best, note.isEmpty ? "" : who + note)
        }
        return outcome
    }

    // MARK: Fan-out

    /// `options.fanout` subscribers of one characteristic at
    /// `options.fanoutRate`, on each contender (alternating), 5 s of values.
    func fanout() throws {
        let rate = options.fanoutRate
        let raw = try baseline["rate\(Int(rate))"] ?? (rate == 1000 ? baseline["notify1k"] : nil) ?? rawListenWithoutGateway(rate: rate)
        let contenders = contenders(for: "fanout")
        var all: [String: Any] = [:]
        let section = "SSE fan-out at \(Format.number(rate)) events/s (vs one raw D-Bus receiver at the same rate)"
        let rawCPU = raw["cpu"] as? [String: Double] ?? [:]
        for clients in options.fanout {
            let count = Int(rate * 5)
            var runs: [Subject: [String: Any]] = [:]
            for subject in contenders {
                say("fan-out: \(clients) subscribers at \(Int(rate))/s (\(subject.rawValue))")
                try use(subject)
                runs[subject] = try stream(subject, clients: clients, rate: rate, count: count,
                                              phase: "\(subject.rawValue) fan-out ×\(clients)")
            }
            all["\(clients)"] = Dictionary(uniqueKeysWithValues: runs.map { ($0.key.rawValue, $0.value) })
            let expected = Double(count * clients)
            func perClient(_ subject: Subject) -> Double? { runs[subject].map { $0.double("delivered_rate") / Double(clients) } }
            func cpu(_ subject: Subject) -> Double? { (runs[subject]?["cpu"] as? [String: Double])?[subject.rawValue] }
            func describe(_ subject: Subject) -> String? {
                guard let result = runs[subject] else { return nil }
                let share = result.double("notifications") / expected * 100
                return "\(subject.rawValue): \(Format.number(result.double("delivered_rate")))/s in all, \(String(format: "%.1f", share))% of \(Format.number(expected)) delivered, \(result.int("lost")) lost, \(result.int("closed_early")) streams dropped, \(result.int("failed")) failed to open"
            }
            for subject in contenders {
                guard let result = runs[subject] else { continue }
                figure(subject, "fanout\(clients)@\(Int(rate)).lost", expected - result.double("unique"))
                figure(subject, "fanout\(clients)@\(Int(rate)).delivered", result.double("notifications"))
                figure(subject, "fanout\(clients)@\(Int(rate)).expected", expected)
                figure(subject, "fanout\(clients)@\(Int(rate)).dropped", result.double("closed_early") + result.double("failed"))
                figure(subject, "fanout\(clients)@\(Int(rate)).cpu", cpu(subject))
                let loadSide = ["sse-load", "responder", "dbus-daemon"].reduce(0.0) { $0 + ((result["cpu"] as? [String: Double])?[$1] ?? 0) }
                if loadSide + ((result["cpu"] as? [String: Double])?["foreign"] ?? 0) * 2 >= 90 {
                    notes.append("Fan-out ×\(clients) (\(subject.rawValue)): CPU 0 (sse-load, responder, dbus-daemon: \(Format.number(loadSide))% of a core, plus others' work) was close to saturation, so the client side may limit this figure.")
                }
            }
            add(Row(section: section, metric: "\(clients) subscribers: delivered events/s per subscriber", gateway: perClient(.gateway),
                    peer: perClient(.peer), baseline: raw.double("rate"), unit: "/s", better: .higher,
                    note: [describe(.gateway), describe(.peer)].compactMap { $0 }.joined(separator: "; ")))
            func undelivered(_ subject: Subject) -> Double? { runs[subject].map { expected - $0.double("unique") } }
            add(Row(section: section, metric: "\(clients) subscribers: values not delivered", gateway: undelivered(.gateway),
                    peer: undelivered(.peer), baseline: raw.double("lost"), unit: "", better: .lower,
                    note: "of \(Format.number(expected)) (\(count) values × \(clients) streams): lost, or on a stream the server dropped, or not there 15 s after the last emission"))
            add(Row(section: section, metric: "\(clients) subscribers: p99 latency", gateway: runs[.gateway]?.double("p99_us"),
                    peer: runs[.peer]?.double("p99_us"), baseline: raw.double("p99_us"), unit: "µs", better: .lower,
                    note: "p50: gateway \(Format.number(runs[.gateway]?.double("p50_us"))) µs, peer \(Format.number(runs[.peer]?.double("p50_us"))) µs, raw \(Format.number(raw.double("p50_us"))) µs"))
            /// µs of CPU per event delivered to a stream, over the whole window
            /// (emission and the drain after it).
            func perEvent(_ subject: Subject) -> Double? {
                guard let result = runs[subject], let usage = result["cpu"] as? [String: Double],
                    let used = usage[subject.rawValue], let window = usage["window_s"], result.double("notifications") > 0
                else { return nil }
                return used / 100 * window / result.double("notifications") * 1e6
            }
            for subject in contenders { figure(subject, "fanout\(clients)@\(Int(rate)).cpu_per_event_us", perEvent(subject)) }
            add(Row(section: section, metric: "\(clients) subscribers: CPU per event delivered", gateway: perEvent(.gateway),
                    peer: perEvent(.peer), baseline: nil, unit: "µs", better: .lower,
                    note: "CPU time over the window (the emission and the drain after it) ÷ events delivered to all streams"))
            add(Row(section: section, metric: "\(clients) subscribers: CPU", gateway: cpu(.gateway), peer: cpu(.peer), baseline: rawCPU["raw"],
                    unit: "%", better: .lower,
                    note: "% of one core; peak RSS: gateway \(Format.number(runs[.gateway].map { $0.double("gateway_peak_rss_kib") / 1024 })) MiB, peer \(Format.number(runs[.peer].map { $0.double("peer_peak_rss_kib") / 1024 })) MiB"))
        }
        results["fanout"] = ["contenders": all, "baseline": raw, "rate": rate]
    }

    private func rawListenWithoutGateway(rate: Double) throws -> [String: Any] {
        try use(.raw)
        return try rawListen(rate: rate, count: Int(rate * 5))
    }

    // MARK: Memory

    /// A fresh gateway and a fresh peer, both idle on the bus (nothing is
    /// emitted in this phase, so neither disturbs the other): idle RSS;
    /// 1,000 idle SSE streams on each in turn; RSS with them, just after
    /// they close, and `settleSeconds` after they closed (the two waits
    /// overlap).
    func memory() throws {
        let contenders = contenders(for: "memory")
        try use(.raw)
        for subject in contenders {
            switch subject {
            case .gateway:
                port = HTTPProbe.freePort()
                gateway = try startGateway(address, port: port, tag: "main")
            case .peer:
                peerPort = HTTPProbe.freePort()
                peer = try startPeer(address, port: peerPort, tag: "main")
            case .raw: break
            }
        }
        Clock.sleep(2)
        var entries: [Subject: [String: Any]] = [:]
        var closedAt: [Subject: Double] = [:]
        for subject in contenders {
            guard let pid = process(subject)?.pid else { continue }
            let idle = ProcStats.memory(pid)?.rss ?? 0
            say("memory: 1,000 idle SSE streams on the \(subject.rawValue) (idle RSS \(idle) KiB)")
            let hold = try Child("sse-load", [tool("sse-load"), "hold", "--port", String(endpoint(subject).port), "--path",
                                              endpoint(subject).idlePath, "--clients", "1000"],
                                 cpu: loadCPU, log: logs + "/sse-load.log")
            guard let ready = hold.readLine(timeout: 120, where: { $0.hasPrefix("ready") }) else { throw BenchError("hold not ready") }
            Clock.sleep(3)
            let with1000 = ProcStats.memory(pid)?.rss ?? 0
            hold.closeInput()
            _ = try? hold.resultJSON(timeout: 30)
            hold.wait(timeout: 5)
            closedAt[subject] = Clock.seconds()
            entries[subject] = ["idle_kib": idle, "with_1000_kib": with1000, "ready": ready, "path": endpoint(subject).idlePath]
        }
        // RSS every 5 s after the streams closed, until `settleSeconds`
        // have passed for each.
        var samples: [Subject: [[Double]]] = [:]
        let last = closedAt.values.max() ?? Clock.seconds()
        var after: [Subject: Int] = [:]
        while after.count < closedAt.count {
            let now = Clock.seconds()
            for (subject, closed) in closedAt where after[subject] == nil {
                let rss = ProcStats.memory(process(subject)?.pid ?? 0)?.rss ?? 0
                samples[subject, default: []].append([(now - closed).rounded(), Double(rss)])
                if now - closed >= options.settleSeconds { after[subject] = rss }
            }
            guard after.count < closedAt.count else { break }
            let next = closedAt.filter { after[$0.key] == nil }.map { $0.value + options.settleSeconds }.min() ?? last
            Clock.sleep(max(0.05, min(5, next - Clock.seconds())))
        }
        let rawRSS = baseline["rss"]?.double("kib")
        var json: [String: Any] = ["settle_s": options.settleSeconds, "raw_receiver_kib": rawRSS ?? 0]
        for subject in contenders {
            guard var entry = entries[subject] else { continue }
            let idle = entry.double("idle_kib"), with1000 = entry.double("with_1000_kib")
            let settled = Double(after[subject] ?? 0)
            entry["after_kib"] = settled
            entry["samples"] = samples[subject] ?? []
            entry["per_stream_kib"] = (with1000 - idle) / 1000
            json[subject.rawValue] = entry
            figure(subject, "idle_rss_mib", idle / 1024)
            figure(subject, "stream_kib", (with1000 - idle) / 1000)
            figure(subject, "rss_after_close_ratio", settled / max(1, idle))
            figure(subject, "rss_after_close_mib", settled / 1024)
        }
        figure(.raw, "idle_rss_mib", rawRSS.map { $0 / 1024 })
        results["memory"] = json
        func value(_ subject: Subject, _ key: String, _ scale: Double = 1024) -> Double? {
            (json[subject.rawValue] as? [String: Any]).map { $0.double(key) / scale }
        }
        let section = "Memory (RSS)"
        add(Row(section: section, metric: "idle, after start-up", gateway: value(.gateway, "idle_kib"), peer: value(.peer, "idle_kib"),
                baseline: rawRSS.map { $0 / 1024 }, unit: "MiB", better: .lower,
                note: "baseline: the raw libdbus receiver (dbus-floor listen) subscribed and idle"))
        add(Row(section: section, metric: "with 1,000 idle SSE streams", gateway: value(.gateway, "with_1000_kib"),
                peer: value(.peer, "with_1000_kib"), baseline: nil, unit: "MiB", better: .lower,
                note: "gateway: GET /v1/events; peer: its notification stream (no values flow)"))
        add(Row(section: section, metric: "cost per idle SSE stream", gateway: value(.gateway, "per_stream_kib", 1),
                peer: value(.peer, "per_stream_kib", 1), baseline: nil, unit: "KiB", better: .lower,
                note: "(RSS with 1,000 − idle RSS) ÷ 1,000"))
        add(Row(section: section, metric: "\(Int(options.settleSeconds)) s after the 1,000 streams closed", gateway: value(.gateway, "after_kib"),
                peer: value(.peer, "after_kib"), baseline: nil, unit: "MiB", better: .lower,
                note: contenders.map { subject in
                    let ratio = (value(subject, "after_kib") ?? 0) / max(0.001, value(subject, "idle_kib") ?? 0)
                    return "\(subject.rawValue) \(String(format: "%.2f", ratio))× its idle RSS"
                }.joined(separator: "; ")))
    }

    /// Connect, subscribe, disconnect, in a loop, for `churnSeconds`, while
    /// the responder notifies at 200/s; RSS sampled every 5 s.
    func churn() throws {
        guard let gateway else { return }
        let seconds = options.churnSeconds
        say("churn: \(Int(seconds)) s of connect, subscribe, disconnect")
        let before = ProcStats.memory(gateway.pid)?.rss ?? 0
        responder?.send("emit 200 \(Int(seconds * 200))")
        let child = try Child("sse-load", [tool("sse-load"), "churn", "--linger", "1", "--port", String(port), "--path",
                                           "\(Self.notifyPath),/v1/events", "--clients", "32", "--duration", String(seconds)],
                              cpu: loadCPU, log: logs + "/sse-load.log")
        let cpu = window([("sse-load", child.pid)])
        var samples: [[Double]] = []
        let start = Clock.seconds()
        while Clock.seconds() - start < seconds {
            samples.append([(Clock.seconds() - start).rounded(), Double(ProcStats.memory(gateway.pid)?.rss ?? 0)])
            Clock.sleep(min(5, max(0.05, seconds - (Clock.seconds() - start))))
        }
        samples.append([(Clock.seconds() - start).rounded(), Double(ProcStats.memory(gateway.pid)?.rss ?? 0)])
        let result = try child.resultJSON(timeout: 30)
        let usage = cpu.finish()
        child.finish()
        record("churn", usage)
        _ = responder?.readLine(timeout: 30, where: { $0.hasPrefix("done") })
        Clock.sleep(5)
        let after = ProcStats.memory(gateway.pid)?.rss ?? 0
        let threads = ProcStats.threads(gateway.pid)
        add(Row(section: "Memory (RSS)", metric: "growth after \(Int(seconds)) s of connect/subscribe/disconnect churn",
                gateway: Double(after - before) / 1024, baseline: nil, unit: "MiB", better: .lower,
                note: "\(Format.number(result.double("cycles"))) cycles (\(Format.number(result.double("cycle_rate")))/s, \(result.int("cycle_failures")) failed) by 32 clients over a notification stream and /v1/events; \(Format.number(Double(before) / 1024)) → \(Format.number(Double(after) / 1024)) MiB, 5 s after; gateway CPU \(usage["gateway"] ?? 0)%, \(threads) threads"))
        results["churn"] = ["seconds": seconds, "before_kib": before, "after_kib": after, "samples": samples, "result": result,
                            "cpu": usage]
        if let progress = result["progress"] as? [[Int]], progress.count > 1 {
            let rates = zip(progress, progress.dropFirst()).map { Double($1[1] - $0[1]) / Double(max(1, $1[0] - $0[0])) }
            notes.append("Churn: cycles per second in each 10 s interval: \(rates.map { Format.number($0) }.joined(separator: ", ")); RSS (MiB) every 5 s: \(samples.map { Format.number($0[1] / 1024) }.joined(separator: ", ")).")
        }
        try idleChurn()
    }

    /// The same churn on streams that carry nothing, where no write can
    /// reveal a client that left: the gateway must notice the closed
    /// connection itself, or the connections pile up. Counts cycles and the
    /// gateway's open descriptors during the churn and a second after it.
    func idleChurn() throws {
        guard let gateway else { return }
        let seconds = 10.0
        say("churn on idle streams: \(Int(seconds)) s")
        let descriptorsBefore = Self.openDescriptors(gateway.pid)
        let child = try Child("sse-load", [tool("sse-load"), "churn", "--linger", "1", "--port", String(port), "--path",
                                           "\(Self.notifyPath),/v1/events", "--clients", "32", "--duration", String(seconds)],
                              cpu: loadCPU, log: logs + "/sse-load.log")
        let result = try child.resultJSON(timeout: seconds + 30)
        let descriptors = Self.openDescriptors(gateway.pid)
        let rss = ProcStats.memory(gateway.pid)?.rss ?? 0
        child.finish()
        usleep(1_000_000)
        let descriptorsSettled = Self.openDescriptors(gateway.pid)
        add(Row(section: "Memory (RSS)", metric: "churn on idle streams (no events): connect/subscribe/disconnect cycles per second",
                gateway: result.double("cycle_rate"), baseline: nil, unit: "/s", better: .higher,
                note: "\(Format.number(result.double("cycles"))) cycles in \(Int(seconds)) s (heartbeats every 15 s); the gateway's open descriptors \(descriptorsBefore) before, \(descriptors) at the end, \(descriptorsSettled) a second later; RSS \(Format.number(Double(rss) / 1024)) MiB at the end"))
        results["idle_churn"] = ["result": result, "descriptors_before": descriptorsBefore, "descriptors_after": descriptors,
                                 "descriptors_settled": descriptorsSettled, "rss_kib": rss]
    }

    static func openDescriptors(_ pid: pid_t) -> Int {
        guard let directory = opendir("/proc/\(pid)/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return max(0, count - 2)
    }

    // MARK: Scanning

    func scan() throws {
        say("scanning: \(options.advertisers) simulated advertisers")
        let point = try scanPoint(advertisers: options.advertisers, interval: options.advertisingInterval, duration: options.duration,
                                  warmup: 4, tag: "scan")
        let result = point.gateway, rawResult = point.raw, offeredResult = point.offered
        let cpu = result["cpu"] as? [String: Double] ?? [:], rawCPU = rawResult["cpu"] as? [String: Double] ?? [:]
        results["scan"] = ["gateway": result, "baseline": rawResult, "offered": offeredResult, "advertisers": options.advertisers,
                           "interval_s": options.advertisingInterval]
        let section = "Scanning: \(Format.number(Double(options.advertisers))) simulated advertisers (bluez-sim), every \(options.advertisingInterval) s each, DuplicateData"
        add(Row(section: section, metric: "events/s delivered to one GET /v1/scan?duplicates=true stream",
                gateway: result.double("measured_rate"), baseline: offeredResult.double("rate"), unit: "/s", better: .higher,
                note: "baseline: org.bluez signals/s received in the same window by a raw libdbus client in the same discovery (alone, on CPU 1: \(Format.number(rawResult.double("rate")))/s); event types \(result["types"] ?? [:])"))
        add(Row(section: section, metric: "CPU", gateway: cpu["gateway"], baseline: rawCPU["raw"], unit: "%", better: .lower,
                note: "% of one core; simulator \(cpu["simulator"] ?? 0)% (raw run \(rawCPU["simulator"] ?? 0)%), dbus-daemon \(cpu["dbus-daemon"] ?? 0)%"))
    }
}

extension Bench {
    /// One scan measurement on a bus and simulator of its own: `advertisers`
    /// simulated advertisers, one report every `interval` s each; a raw
    /// libdbus client in the discovery alone, then the release gateway's
    /// GET /v1/scan?duplicates=true stream counted by sse-load while a
    /// second raw client counts what the simulator offers in the same
    /// window. Each result carries the CPU of the processes in its window.
    func scanPoint(advertisers: Int, interval: Double, duration: Double, warmup: Double, tag: String) throws
        -> (gateway: [String: Any], raw: [String: Any], offered: [String: Any])
    {
        let (daemon, scanAddress) = try startDaemon(tag)
        defer { daemon.stop() }
        let scenario = options.out + "/advertisers-\(tag).yaml"
        var yaml = "# \(advertisers) advertisers, one report every \(interval) s each\ntiming: 1\ndevices:\n"
        for index in 0..<advertisers {
            let address = String(format: "D0:00:00:00:%02X:%02X", index >> 8, index & 0xFF)
            yaml += """
                  - address: "\(address)"
                    name: "Sensor \(index)"
                    rssi: \(-40 - index % 50)
                    rssiJitter: 5
                    advertising: { interval: \(interval), uuids: ["181a"], manufacturerData: { 0xffff: "0000" }, counter: true }

                """
        }
        try yaml.write(toFile: scenario, atomically: true, encoding: .utf8)
        let simulator = try Child("bluez-sim", [simulatorBinary, "--bus", scanAddress, "--scenario", scenario, "--timing", "1"],
                                  cpu: loadCPU, log: logs + "/bluez-sim-\(tag).log")
        defer { simulator.stop() }
        guard simulator.readLine(timeout: 120, where: { $0.hasPrefix("bluez-sim: serving") }) != nil else {
            throw BenchError("bluez-sim did not start")
        }
        let raw = try Child("dbus-floor", [tool("dbus-floor"), "scan", "--linger", "1", "--bus", scanAddress, "--duration", String(duration),
                                           "--warmup", String(warmup)], cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        Clock.sleep(warmup)
        let rawWindow = CPUWindow([("raw", raw.pid), ("simulator", simulator.pid), ("dbus-daemon", daemon.pid)])
        var rawResult = try raw.resultJSON(timeout: duration + 60)
        let rawCPU = rawWindow.finish()
        raw.finish()
        rawResult["cpu"] = rawCPU
        record("raw \(tag)", rawCPU)
        Clock.sleep(2)

        let scanPort = HTTPProbe.freePort()
        let gateway = try startGateway(scanAddress, port: scanPort, tag: tag)
        defer { gateway.stop() }
        // What the simulator offers in the same window, counted by a second
        // raw client on the load side (the separate raw run above gives the
        // baseline's CPU; its rate depends on how busy CPU 0 was then).
        let offered = try Child("dbus-floor", [tool("dbus-floor"), "scan", "--linger", "1", "--bus", scanAddress,
                                               "--duration", String(duration), "--warmup", String(warmup)],
                                cpu: loadCPU, log: logs + "/dbus-floor.log")
        let client = try Child("sse-load", [tool("sse-load"), "count", "--linger", "1", "--port", String(scanPort), "--path", "/v1/scan?duplicates=true",
                                            "--clients", "1", "--duration", String(duration), "--warmup", String(warmup),
                                            "--timeout-ms", "120000"], cpu: loadCPU, log: logs + "/sse-load.log")
        guard client.readLine(timeout: 30, where: { $0.hasPrefix("ready") }) != nil else { throw BenchError("scan stream not ready") }
        Clock.sleep(warmup)
        let gatewayWindow = CPUWindow([("gateway", gateway.pid), ("simulator", simulator.pid), ("dbus-daemon", daemon.pid),
                                       ("sse-load", client.pid)])
        var result = try client.resultJSON(timeout: duration + 60)
        let cpu = gatewayWindow.finish()
        client.finish()
        let offeredResult = try offered.resultJSON(timeout: 30)
        offered.finish()
        result["cpu"] = cpu
        record("gateway \(tag)", cpu)
        return (result, rawResult, offeredResult)
    }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

extension Bench {
    /// An MQTT command burst (scripts/mqtt-command-burst.py): 10,000
    /// `cmd/connect` for absent devices published at once to a gateway on
    /// its simulator, with GET /health polled every 10 ms before and
    /// during it. The baseline is /health on the same gateway with nothing
    /// else going on.
    func burst() throws {
        say("burst: 10,000 MQTT commands while GET /health is polled")
        let script = try Child(
            "mqtt-command-burst",
            ["/usr/bin/env", "python3", options.root + "/scripts/mqtt-command-burst.py", gatewayBinary, "--json"],
            cpu: nil, log: logs + "/mqtt-command-burst.log")
        let result = try script.resultJSON(timeout: 900)
        script.finish()
        results["burst"] = result
        let quiet = result["health_quiet"] as? [String: Any] ?? [:]
        let during = result["health_burst"] as? [String: Any] ?? [:]
        let section = "An MQTT command burst: 10,000 cmd/connect for absent devices, sent in \(result["sent_s"] ?? "?") s"
        add(Row(section: section, metric: "slowest GET /health during the burst", gateway: during.double("slowest_ms"),
                baseline: quiet.double("slowest_ms"), unit: "ms", better: .lower,
                note: "baseline: the slowest /health before the burst; medians \(during["median_ms"] ?? "?") and \(quiet["median_ms"] ?? "?") ms; answers \(result["statuses"] ?? [:]) after \(result["answered_s"] ?? "?") s"))
        add(Row(section: section, metric: "peak RSS", gateway: result.double("peak_rss_mib"), baseline: nil, unit: "MiB",
                better: .lower, note: "the gateway's VmRSS, sampled with each /health"))
    }
}
