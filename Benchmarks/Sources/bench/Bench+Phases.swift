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

    func startupGateway() throws {
        say("startup (5 runs)")
        var health: [Double] = [], adapters: [Double] = []
        for run in 0..<5 {
            let port = HTTPProbe.freePort()
            let start = Clock.seconds()
            let child = try startGateway(address, port: port, tag: "startup-\(run)")
            health.append((Clock.seconds() - start) * 1000)
            while Clock.seconds() - start < 20 {
                if let response = HTTPProbe.get(port: port, path: "/v1/adapters"), response.status == 200,
                    response.body.contains("\"hci0\"")
                {
                    break
                }
                Clock.sleep(0.002)
            }
            adapters.append((Clock.seconds() - start) * 1000)
            child.stop()
        }
        let floor = baseline["startup"]?.double("ms")
        results["startup"] = ["health_ms": health, "adapters_ms": adapters, "floor_ms": baseline["startup"]?["runs"] ?? []]
        add(Row(section: "Startup", metric: "process start → first 200 on /health (median of 5)", gateway: median(health),
                baseline: floor, unit: "ms", better: .lower,
                note: "baseline: a libdbus client connects, adds its match rule and reads GetManagedObjects; runs \(health.map { Format.number($0) }.joined(separator: ", ")) ms"))
        add(Row(section: "Startup", metric: "process start → adapters listed by GET /v1/adapters (median of 5)",
                gateway: median(adapters), baseline: floor, unit: "ms", better: .lower, note: ""))
    }

    // MARK: D-Bus economy

    /// Exact D-Bus message counts of the subject, from dbus-monitor on the
    /// private bus: messages it sent, messages addressed to it, and
    /// broadcast signals its match rules (read from the bus daemon) deliver
    /// to it; divided by the ReadValue calls it made / the notifications
    /// emitted.
    func economy(subject: Subject) throws {
        say("D-Bus economy (\(subject == .gateway ? "gateway" : "raw"))")
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
        if subject == .baseline { subjectName = try uniqueName(pid: receiver.pid) }
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
        if subject == .baseline {
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
            let child = try Child("dbus-floor", [tool("dbus-floor"), "read", "--linger", "1", "--bus", address, "--inflight", String(inflight),
                                                 "--duration", String(options.duration), "--warmup", "2"],
                                  cpu: gatewayCPU, log: logs + "/dbus-floor.log")
            Clock.sleep(2)
            let cpu = window([("raw", child.pid)])
            var result = try child.resultJSON(timeout: options.duration + 30)
            let usage = cpu.finish()
            child.finish()
            result["cpu"] = usage
            record("raw ReadValue ×\(inflight)", usage)
            baseline["read\(inflight)"] = result
        }
    }

    func restGateway() throws {
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
        var figures: [String: Any] = [:]
        for (path, label) in [(Self.readPath, "read"), ("/health", "health")] {
            for clients in [1, 16] {
                say("wrk \(label), \(clients) connection(s)")
                let url = "http://127.0.0.1:\(port)\(path)"
                _ = try runTool("wrk", ["/usr/bin/wrk", "-t1", "-c\(clients)", "-d2s", "-s", script, url], cpu: loadCPU, timeout: 30)
                let child = try Child("wrk", ["/usr/bin/wrk", "-t1", "-c\(clients)", "-d\(Int(options.duration))s", "-s", script, url],
                                      cpu: loadCPU, log: logs + "/wrk.log")
                let cpu = window([("wrk", child.pid)])
                // wrk cannot linger: the window closes just before it ends.
                Clock.sleep(options.duration - 0.3)
                let usage = cpu.finish()
                var result = try child.resultJSON(timeout: options.duration + 30)
                result["cpu"] = usage
                result["rps"] = result.double("requests") / (result.double("duration_us") / 1e6)
                record("GET \(label) ×\(clients)", usage)
                figures["\(label)\(clients)"] = result
                if result.int("errors") + result.int("non2xx") > 0 {
                    notes.append("wrk \(label) ×\(clients): \(result.int("errors")) socket errors, \(result.int("non2xx")) non-2xx responses.")
                }
            }
        }
        results["rest"] = ["gateway": figures, "baseline": ["read1": baseline["read1"] ?? [:], "read16": baseline["read16"] ?? [:]]]
        for clients in [1, 16] {
            guard let gateway = figures["read\(clients)"] as? [String: Any] else { continue }
            let raw = baseline["read\(clients)"]
            let section = "REST read (GET …/characteristics/fff1/value) vs raw ReadValue"
            let who = clients == 1 ? "1 client (sequential)" : "16 concurrent clients (16 in flight)"
            add(Row(section: section, metric: "p50 latency, \(who)", gateway: gateway.double("p50_us"), baseline: raw?.double("p50_us"),
                    unit: "µs", better: .lower))
            add(Row(section: section, metric: "p99 latency, \(who)", gateway: gateway.double("p99_us"), baseline: raw?.double("p99_us"),
                    unit: "µs", better: .lower))
            let cpu = gateway["cpu"] as? [String: Double] ?? [:]
            let rawCPU = raw?["cpu"] as? [String: Double] ?? [:]
            add(Row(section: section, metric: "throughput, \(who)", gateway: gateway.double("rps"), baseline: raw?.double("rps"),
                    unit: "req/s", better: .higher,
                    note: "CPU: gateway \(cpu["gateway"] ?? 0)%, responder \(cpu["responder"] ?? 0)% (raw run: \(rawCPU["responder"] ?? 0)%), dbus-daemon \(cpu["dbus-daemon"] ?? 0)%, wrk \(cpu["wrk"] ?? 0)%"))
            add(Row(section: section, metric: "gateway CPU per read, \(who)",
                    gateway: (cpu["gateway"] ?? 0) * 10_000 / max(1, gateway.double("rps")),
                    baseline: (rawCPU["raw"] ?? 0) * 10_000 / max(1, raw?.double("rps") ?? 1), unit: "µs", better: .lower,
                    note: "CPU time of the gateway (baseline: of the raw client) per request"))
        }
        for clients in [1, 16] {
            guard let health = figures["health\(clients)"] as? [String: Any] else { continue }
            add(Row(section: "HTTP only (GET /health, no D-Bus): a reference for the HTTP layer's share",
                    metric: "throughput, \(clients) client(s)", gateway: health.double("rps"), baseline: nil, unit: "req/s",
                    better: .higher, note: "p50 \(Format.number(health.double("p50_us"))) µs, p99 \(Format.number(health.double("p99_us"))) µs"))
        }
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
        try ladder(subject: .baseline, rates: [2000, 5000, 10_000, 20_000, 50_000, 100_000])
    }

    func notifyGateway() throws {
        say("notifications through the gateway at 1 kHz")
        let count = Int(1000 * options.duration)
        let result = try stream(clients: 1, rate: 1000, count: count, phase: "gateway 1 kHz")
        let raw = baseline["notify1k"]
        results["notify1k"] = ["gateway": result, "baseline": raw ?? [:]]
        let section = "Notification path: value emitted → SSE event received (vs raw D-Bus signal receiver)"
        add(Row(section: section, metric: "p50 latency at 1 kHz", gateway: result.double("p50_us"), baseline: raw?.double("p50_us"),
                unit: "µs", better: .lower, note: "\(result.int("notifications")) of \(count) received, \(result.int("lost")) lost"))
        add(Row(section: section, metric: "p99 latency at 1 kHz", gateway: result.double("p99_us"), baseline: raw?.double("p99_us"),
                unit: "µs", better: .lower))
        let cpu = result["cpu"] as? [String: Double] ?? [:]
        let rawCPU = raw?["cpu"] as? [String: Double] ?? [:]
        add(Row(section: section, metric: "CPU at 1 kHz", gateway: cpu["gateway"], baseline: rawCPU["raw"], unit: "%",
                better: .lower, note: "% of one core; gateway vs the raw receiver"))
        let best = try ladder(subject: .gateway, rates: [2000, 5000, 10_000, 20_000, 50_000, 100_000])
        let rawBest = baseline["ladder"]?.double("best")
        add(Row(section: section, metric: "highest sustained rate with zero loss (4 s steps)", gateway: best.rate,
                baseline: rawBest, unit: "/s", better: .higher, note: best.note + (baseline["ladder"]?["note"] as? String ?? "")))
    }

    /// One run of `clients` SSE streams of the notifying characteristic
    /// while the responder emits `count` values at `rate`.
    func stream(clients: Int, rate: Double, count: Int, phase: String) throws -> [String: Any] {
        let child = try Child("sse-load", [tool("sse-load"), "stream", "--linger", "1", "--port", String(port), "--path", Self.notifyPath,
                                           "--clients", String(clients), "--count", String(count), "--idle-ms", "3000",
                                           "--timeout-ms", String(Int(Double(count) / rate * 1000 * 4 + 60_000))],
                              cpu: loadCPU, log: logs + "/sse-load.log")
        guard child.readLine(timeout: 120, where: { $0.hasPrefix("ready") }) != nil else { throw BenchError("sse-load not ready") }
        let cpu = window([("sse-load", child.pid)])
        let emitted = try emit(rate: rate, count: count)
        var result = try child.resultJSON(timeout: Double(count) / rate * 4 + 120)
        let usage = cpu.finish()
        child.finish()
        result["cpu"] = usage
        result["emit_seconds"] = emitted.seconds
        result["gateway_rss_kib"] = ProcStats.memory(gateway?.pid ?? 0)?.rss ?? 0
        result["gateway_peak_rss_kib"] = ProcStats.memory(gateway?.pid ?? 0)?.peak ?? 0
        record(phase, usage)
        return result
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

    /// Raises the rate until a step loses a value (or the responder cannot
    /// emit that fast), then bisects twice between the last good rate and
    /// the first bad one. Each step sends 4 s of values.
    @discardableResult
    func ladder(subject: Subject, rates: [Double]) throws -> (rate: Double, note: String) {
        say("highest zero-loss rate (\(subject == .gateway ? "gateway" : "raw"))")
        var steps: [[String: Any]] = []
        var good: Double?
        var bad: Double?
        var note = ""
        func attempt(_ rate: Double) throws -> Bool {
            let count = Int(rate * 4)
            var result = subject == .gateway
                ? try stream(clients: 1, rate: rate, count: count, phase: "gateway \(Int(rate))/s")
                : try rawListen(rate: rate, count: count)
            let received = result.int(subject == .gateway ? "unique" : "unique")
            // Sustained: nothing lost, and no backlog building up (a queue
            // in the bus daemon or the gateway shows as a p99 beyond 100 ms).
            let lossless = result.int("lost") == 0 && result.int("out_of_order") == 0 && received == count
                && result.int("closed_early") == 0 && result.double("p99_us") < 100_000
            let emitterKeptUp = result.double("emit_seconds") <= Double(count) / rate * 1.1 + 0.05
            result["rate"] = rate
            result["lossless"] = lossless
            result["emitter_kept_up"] = emitterKeptUp
            steps.append(result)
            if subject == .baseline { baseline["rate\(Int(rate))"] = result }
            say("  \(Int(rate))/s: \(received) of \(count)\(lossless ? "" : ", LOSS or backlog") p99 \(Format.number(result.double("p99_us"))) µs\(emitterKeptUp ? "" : " (responder could not keep the rate)")")
            if !emitterKeptUp { note = " The responder could not emit faster than this; the real limit may be higher." }
            return lossless && emitterKeptUp
        }
        for rate in rates {
            if try attempt(rate) { good = rate } else {
                bad = rate
                break
            }
        }
        if let low = good, let high = bad, note.isEmpty {
            var (low, high) = (low, high)
            for _ in 0..<2 {
                let middle = ((low * high).squareRoot() / 100).rounded() * 100
                guard middle > low, middle < high else { break }
                if try attempt(middle) { low = middle } else { high = middle }
            }
            good = low
            note = " Sustained at \(Format.number(low))/s; loss or a growing backlog (p99 > 100 ms) at \(Format.number(high))/s."
        }
        let best = good ?? 0
        let key = subject == .gateway ? "ladder_gateway" : "ladder_baseline"
        results[key] = ["best": best, "steps": steps, "note": note]
        if subject == .baseline { baseline["ladder"] = ["best": best, "note": note.isEmpty ? "" : " Raw:" + note] }
        return (best, note.isEmpty ? "" : "Gateway:" + note)
    }

    // MARK: Fan-out

    func fanout() throws {
        let rate = options.fanoutRate
        let raw = try baseline["rate\(Int(rate))"] ?? rawListenWithoutGateway(rate: rate)
        var all: [String: Any] = [:]
        let section = "SSE fan-out at \(Format.number(rate)) events/s (vs one raw D-Bus receiver at the same rate)"
        let rawCPU = raw["cpu"] as? [String: Double] ?? [:]
        for clients in options.fanout {
            say("fan-out: \(clients) subscribers at \(Int(rate))/s")
            let count = Int(rate * 5)
            let result = try stream(clients: clients, rate: rate, count: count, phase: "fan-out ×\(clients)")
            all["\(clients)"] = result
            let cpu = result["cpu"] as? [String: Double] ?? [:]
            let perClient = result.double("delivered_rate") / Double(clients)
            let expected = Double(count * clients)
            let share = result.double("notifications") / expected * 100
            add(Row(section: section, metric: "\(clients) subscribers: delivered events/s per subscriber", gateway: perClient,
                    baseline: raw.double("rate"), unit: "/s", better: .higher,
                    note: "all subscribers: \(Format.number(result.double("delivered_rate")))/s; \(String(format: "%.1f", share))% of \(Format.number(expected)) delivered; \(result.int("lost")) lost, \(result.int("closed_early")) streams dropped, \(result.int("failed")) failed to open"))
            add(Row(section: section, metric: "\(clients) subscribers: p99 latency", gateway: result.double("p99_us"),
                    baseline: raw.double("p99_us"), unit: "µs", better: .lower,
                    note: "p50 \(Format.number(result.double("p50_us"))) µs (raw \(Format.number(raw.double("p50_us"))) µs)"))
            let loadSide = (cpu["sse-load"] ?? 0) + (cpu["responder"] ?? 0) + (cpu["dbus-daemon"] ?? 0)
            if loadSide + (cpu["foreign"] ?? 0) * 2 >= 90 {
                notes.append("Fan-out ×\(clients): CPU 0 (sse-load, responder, dbus-daemon: \(Format.number(loadSide))% of a core, plus others' work) was close to saturation, so the client side may limit this figure.")
            }
            add(Row(section: section, metric: "\(clients) subscribers: CPU", gateway: cpu["gateway"], baseline: rawCPU["raw"],
                    unit: "%", better: .lower,
                    note: "% of one core; sse-load \(cpu["sse-load"] ?? 0)%, responder \(cpu["responder"] ?? 0)%, dbus-daemon \(cpu["dbus-daemon"] ?? 0)%; gateway peak RSS \(Format.number(result.double("gateway_peak_rss_kib") / 1024)) MiB"))
        }
        results["fanout"] = ["gateway": all, "baseline": raw]
    }

    private func rawListenWithoutGateway(rate: Double) throws -> [String: Any] {
        notes.append("The fan-out baseline was measured with the gateway on the bus (idle).")
        return try rawListen(rate: rate, count: Int(rate * 5))
    }

    // MARK: Memory

    func memory(idleRSS: Int) throws {
        say("memory: 1,000 SSE clients")
        guard let gateway else { return }
        let before = ProcStats.memory(gateway.pid)?.rss ?? idleRSS
        let hold = try Child("sse-load", [tool("sse-load"), "hold", "--port", String(port), "--path", "/v1/events", "--clients", "1000"],
                             cpu: loadCPU, log: logs + "/sse-load.log")
        guard let ready = hold.readLine(timeout: 120, where: { $0.hasPrefix("ready") }) else { throw BenchError("hold not ready") }
        Clock.sleep(3)
        let with1000 = ProcStats.memory(gateway.pid)?.rss ?? 0
        hold.closeInput()
        _ = try? hold.resultJSON(timeout: 30)
        Clock.sleep(3)
        let after = ProcStats.memory(gateway.pid)?.rss ?? 0
        let perClient = Double(with1000 - before) / 1000
        let rawRSS = baseline["rss"]?.double("kib")
        add(Row(section: "Memory (RSS)", metric: "idle, after start-up", gateway: Double(idleRSS) / 1024,
                baseline: rawRSS.map { $0 / 1024 }, unit: "MiB", better: .lower,
                note: "baseline: the raw libdbus receiver (dbus-floor listen) subscribed and idle"))
        add(Row(section: "Memory (RSS)", metric: "with 1,000 SSE clients on /v1/events", gateway: Double(with1000) / 1024,
                baseline: nil, unit: "MiB", better: .lower,
                note: "\(ready); before them \(Format.number(Double(before) / 1024)) MiB, after they left \(Format.number(Double(after) / 1024)) MiB"))
        add(Row(section: "Memory (RSS)", metric: "cost per SSE client", gateway: perClient, baseline: nil, unit: "KiB",
                better: .lower, note: "(RSS with 1,000 − RSS before) ÷ 1,000; no raw equivalent"))
        results["memory"] = ["idle_kib": idleRSS, "before_kib": before, "with_1000_kib": with1000, "after_kib": after,
                             "per_client_kib": perClient, "raw_receiver_kib": rawRSS ?? 0]
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
        let (daemon, scanAddress) = try startDaemon("scan")
        defer { daemon.stop() }
        let scenario = options.out + "/advertisers.yaml"
        var yaml = "# \(options.advertisers) advertisers, one report every \(options.advertisingInterval) s each\ntiming: 1\ndevices:\n"
        for index in 0..<options.advertisers {
            let address = String(format: "D0:00:00:00:%02X:%02X", index >> 8, index & 0xFF)
            yaml += """
                  - address: "\(address)"
                    name: "Sensor \(index)"
                    rssi: \(-40 - index % 50)
                    rssiJitter: 5
                    advertising: { interval: \(options.advertisingInterval), uuids: ["181a"], manufacturerData: { 0xffff: "0000" }, counter: true }

                """
        }
        try yaml.write(toFile: scenario, atomically: true, encoding: .utf8)
        let simulator = try Child("bluez-sim", [simulatorBinary, "--bus", scanAddress, "--scenario", scenario, "--timing", "1"],
                                  cpu: loadCPU, log: logs + "/bluez-sim.log")
        defer { simulator.stop() }
        guard simulator.readLine(timeout: 120, where: { $0.hasPrefix("bluez-sim: serving") }) != nil else {
            throw BenchError("bluez-sim did not start")
        }
        let warmup = 4.0
        let raw = try Child("dbus-floor", [tool("dbus-floor"), "scan", "--linger", "1", "--bus", scanAddress, "--duration", String(options.duration),
                                           "--warmup", String(warmup)], cpu: gatewayCPU, log: logs + "/dbus-floor.log")
        Clock.sleep(warmup)
        let rawWindow = CPUWindow([("raw", raw.pid), ("simulator", simulator.pid), ("dbus-daemon", daemon.pid)])
        var rawResult = try raw.resultJSON(timeout: options.duration + 60)
        let rawCPU = rawWindow.finish()
        raw.finish()
        rawResult["cpu"] = rawCPU
        record("raw scan", rawCPU)
        Clock.sleep(2)

        let scanPort = HTTPProbe.freePort()
        let gateway = try startGateway(scanAddress, port: scanPort, tag: "scan")
        defer { gateway.stop() }
        // What the simulator offers in the same window, counted by a second
        // raw client on the load side (the separate raw run above gives the
        // baseline's CPU; its rate depends on how busy CPU 0 was then).
        let offered = try Child("dbus-floor", [tool("dbus-floor"), "scan", "--linger", "1", "--bus", scanAddress,
                                               "--duration", String(options.duration), "--warmup", String(warmup)],
                                cpu: loadCPU, log: logs + "/dbus-floor.log")
        let client = try Child("sse-load", [tool("sse-load"), "count", "--linger", "1", "--port", String(scanPort), "--path", "/v1/scan?duplicates=true",
                                            "--clients", "1", "--duration", String(options.duration), "--warmup", String(warmup),
                                            "--timeout-ms", "120000"], cpu: loadCPU, log: logs + "/sse-load.log")
        guard client.readLine(timeout: 30, where: { $0.hasPrefix("ready") }) != nil else { throw BenchError("scan stream not ready") }
        Clock.sleep(warmup)
        let gatewayWindow = CPUWindow([("gateway", gateway.pid), ("simulator", simulator.pid), ("dbus-daemon", daemon.pid),
                                       ("sse-load", client.pid)])
        var result = try client.resultJSON(timeout: options.duration + 60)
        let cpu = gatewayWindow.finish()
        client.finish()
        let offeredResult = try offered.resultJSON(timeout: 30)
        offered.finish()
        result["cpu"] = cpu
        record("gateway scan", cpu)
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

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}
