import Foundation
import TestSupport
import Testing

/// Operating the gateway: `/metrics` read by Prometheus's own parser and
/// moving with use, request ids, JSON logs, and the web console driven in
/// headless Chromium.
@Suite struct ObservabilityTests {
    static let strap = "C4:7C:8D:6A:3E:01"
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("observability").path

    /// One sample of a scrape: the metric's name and labels.
    struct Series: Hashable {
        let name: String
        let labels: [String: String]
    }

    /// `/metrics` checked by `promtool check metrics` (Prometheus's own
    /// linter: HELP and TYPE on every family, counter names ending in
    /// `_total`, units in names) and parsed by prometheus_client's parser
    /// (which fails on text that is not valid exposition format).
    static func scrape(_ gateway: GatewayUnderTest) async throws -> [Series: Double] {
        let answer = try await gateway.get("/metrics")
        #expect(answer.status == 200)
        #expect(answer.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
        let file = gateway.bus.daemon.directory + "/metrics-\(UInt64.random(in: 0...UInt64.max)).txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data(answer.body))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let lint = try await run(["sh", "-c", "promtool check metrics < \"\(file)\" 2>&1"])
        #expect(lint.status == 0 && lint.output.isEmpty, "promtool check metrics:\n\(lint.output)")
        let parsed = try await run(["sh", "-c", "python3 \"\(scripts)/read_metrics.py\" < \"\(file)\""])
        guard parsed.status == 0,
            let samples = try JSONSerialization.jsonObject(with: Data(parsed.output.utf8)) as? [[Any]]
        else {
            throw GatewayTestError("prometheus_client refused /metrics: \(parsed.error)\n\(answer.text.prefix(3000))")
        }
        var result: [Series: Double] = [:]
        for sample in samples where sample.count == 3 {
            guard let name = sample[0] as? String, let labels = sample[1] as? [String: String],
                let value = (sample[2] as? NSNumber)?.doubleValue
            else { continue }
            result[Series(name: name, labels: labels)] = value
        }
        return result
    }

    /// Scrapes until `condition` holds (a stream's end reaches the gauges
    /// when the gateway notices the client left).
    static func scrape(
        _ gateway: GatewayUnderTest, until condition: ([Series: Double]) -> Bool
    ) async throws -> [Series: Double] {
        let deadline = ContinuousClock.now + .seconds(30)
        var metrics = try await scrape(gateway)
        while !condition(metrics), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            metrics = try await scrape(gateway)
        }
        return metrics
    }

    @Test func prometheusReadsTheMetricsAndTheyMoveWithUse() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(Self.strap)
        #expect(try await gateway.request("POST", "/v1/devices/\(Self.strap)/connect").status == 200)
        let valueRoute = Series(
            name: "blegateway_http_requests_total",
            labels: ["method": "GET", "route": "/v1/devices/{address}/characteristics/{characteristic}/value", "status": "200"])
        let before = try await Self.scrape(gateway)
        // Counters are there from the start, and the state gauges say what is up.
        for (name, value) in [
            ("blegateway_dbus_reconnect_attempts_total", 0.0), ("blegateway_keeper_given_up_total", 0),
            ("blegateway_dbus_connected", 1), ("blegateway_bluez_available", 1), ("blegateway_store_lag_events", 0),
        ] {
            #expect(before[Series(name: name, labels: [:])] == value, "\(name)")
        }
        #expect(before[Series(name: "blegateway_pairing_attempts_total", labels: ["outcome": "failed"])] == 0)
        #expect(before[Series(name: "blegateway_adapter_powered", labels: ["adapter": "hci0"])] == 1)
        #expect(before.contains { $0.key.name == "blegateway_build_info" && $0.key.labels["version"] != nil && $0.value == 1 })
        #expect(before[Series(name: "process_cpu_seconds_total", labels: [:]), default: 0] > 0)
        #expect(before[Series(name: "blegateway_store_size_bytes", labels: [:]), default: 0] > 0)

        #expect(try await gateway.get("/v1/devices/\(Self.strap)/characteristics/2a38/value").status == 200)
        let afterRead = try await Self.scrape(gateway)
        #expect(afterRead[valueRoute, default: 0] == before[valueRoute, default: 0] + 1)
        let readCalls = Series(
            name: "blegateway_dbus_call_duration_seconds_count", labels: ["method": "org.bluez.GattCharacteristic1.ReadValue"])
        #expect(afterRead[readCalls, default: 0] >= 1)
        #expect(afterRead[Series(name: "blegateway_devices_connected", labels: [:])] == 1)
        #expect(afterRead[Series(name: "process_resident_memory_bytes", labels: [:]), default: 0] > 1_000_000)
        #expect(afterRead[Series(name: "process_open_fds", labels: [:]), default: 0] > 3)
        let unmatched = Series(name: "blegateway_http_requests_total", labels: ["method": "GET", "route": "unmatched", "status": "404"])
        _ = try await gateway.get("/no/such/route/\(UInt64.random(in: 0...UInt64.max))")
        let afterMiss = try await Self.scrape(gateway)
        #expect(afterMiss[unmatched, default: 0] == afterRead[unmatched, default: 0] + 1)

        let openNotifications = Series(name: "blegateway_open_streams", labels: ["kind": "notifications"])
        let subscriptions = Series(name: "blegateway_subscriptions", labels: [:])
        let valueEvents = Series(name: "blegateway_events_total", labels: ["type": "characteristic-value"])
        let strapValues = Series(name: "blegateway_characteristic_values_total", labels: ["device": Self.strap])
        #expect(afterMiss[openNotifications] == 0)
        let stream = try gateway.stream("/v1/devices/\(Self.strap)/characteristics/2a37/notifications")
        #expect(await stream.waitFor(2, of: "notification").count >= 2)
        let streaming = try await Self.scrape(gateway)
        #expect(streaming[openNotifications] == 1)
        #expect(streaming[subscriptions] == 1)
        #expect(streaming[valueEvents, default: 0] >= 2 + afterMiss[valueEvents, default: 0])
        #expect(streaming[strapValues, default: 0] >= 2 + afterMiss[strapValues, default: 0])
        stream.close()
        let closed = try await Self.scrape(gateway) { $0[openNotifications] == 0 && $0[subscriptions] == 0 }
        #expect(closed[openNotifications] == 0)
        #expect(closed[subscriptions] == 0)
        #expect(await gateway.stop() == 0)
    }

    @Test func everyResponseCarriesARequestIDThatProblemsRepeat() async throws {
        let gateway = try await GatewayUnderTest.start()
        let missing = "/v1/devices/00:11:22:33:44:55"
        let given = try await gateway.get(missing, headers: ["X-Request-ID": "trace-42.a/b"])
        #expect(given.status == 404)
        #expect(given.headers["x-request-id"] == "trace-42.a/b")
        #expect(given.object["request_id"] as? String == "trace-42.a/b")

        for insane in ["two words", String(repeating: "x", count: 129), "quote\"d"] {
            let answer = try await gateway.get(missing, headers: ["X-Request-ID": insane])
            let id = answer.headers["x-request-id"] ?? ""
            #expect(id.count == 16 && id.allSatisfy(\.isHexDigit), "\(insane) -> \(id)")
            #expect(answer.object["request_id"] as? String == id)
        }
        let first = try await gateway.get("/health").headers["x-request-id"]
        let second = try await gateway.get("/health").headers["x-request-id"]
        #expect(first != nil && first != second)
        #expect(gateway.process.standardError.contains("request_id=trace-42.a/b"))
        #expect(await gateway.stop() == 0)
    }

    /// The console's files are served as they are in console/ (run
    /// scripts/embed-console.sh after editing them), open without the API
    /// key and kept to the gateway's own origin, while /metrics needs the key.
    @Test func theConsoleFilesAreServedAsWrittenWithoutTheKey() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--api-key", "k-123"])
        let console = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("console")
        for (path, file, type) in [
            ("/", "index.html", "text/html"), ("/console.css", "console.css", "text/css"),
            ("/console.js", "console.js", "text/javascript"),
        ] {
            let answer = try await gateway.get(path)
            #expect(answer.status == 200, "\(path)")
            #expect(answer.contentType?.hasPrefix(type) == true, "\(path): \(answer.contentType ?? "")")
            let written = try Data(contentsOf: console.appendingPathComponent(file))
            #expect(answer.body == Array(written), "\(path) differs from console/\(file): run scripts/embed-console.sh")
            #expect(answer.headers["content-security-policy"]?.hasPrefix("default-src 'self'") == true)
        }
        #expect(try await gateway.get("/metrics").status == 401)
        #expect(try await gateway.get("/metrics", headers: ["Authorization": "Bearer k-123"]).status == 200)
        #expect(try await gateway.get("/v1").status == 401)
        #expect(await gateway.stop() == 0)
    }

    /// Starts `blegateway serve --simulate` on a free port; returns it with
    /// its base URL, read from the "listening on" line (text or JSON).
    static func startSimulated(_ arguments: [String]) async throws -> (ChildProcess, String) {
        let process = try ChildProcess(
            [GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:0"] + arguments)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let log = process.standardError
            if let range = log.range(of: "listening on http://127.0.0.1:") {
                let digits = log[range.upperBound...].prefix { $0.isNumber }
                let after = log[range.upperBound...].dropFirst(digits.count).first
                if after == "\n" || after == "\"", let port = Int(digits) { return (process, "http://127.0.0.1:\(port)") }
            }
            if await process.wait(timeout: .milliseconds(50)) != nil { break }
        }
        process.kill()
        throw GatewayTestError("the gateway did not start:\n\(process.standardError)")
    }

    @Test func jsonLogsAreOneObjectPerLineWithTheRequestID() async throws {
        let (process, base) = try await Self.startSimulated(["--log-format", "json", "--log-level", "debug"])
        let result = try await run(["curl", "-s", "-H", "X-Request-ID: json-log-7", base + "/v1/devices/00:11:22:33:44:55"])
        #expect(result.status == 0)
        process.signal(SIGTERM)
        #expect(await process.wait(timeout: .seconds(30)) == 0)
        let lines = process.standardError.split(separator: "\n")
        #expect(lines.count > 3)
        var requestLines = 0
        for line in lines {
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            guard let object else { continue }
            for key in ["timestamp", "level", "label", "message"] { #expect(object[key] is String, "\(key) in \(line)") }
            if let metadata = object["metadata"] as? [String: Any], metadata["request_id"] as? String == "json-log-7" {
                requestLines += 1
            }
        }
        #expect(requestLines >= 1, "no line carries the request id:\n\(process.standardError.suffix(2000))")
    }

    /// The web console in headless Chromium (Tests/observability/console_check.py):
    /// with an API key, it scans, connects the strap and plots its heart
    /// rate, and the browser logs no error.
    @Test(.timeLimit(.minutes(5))) func theConsolePlotsHeartRateInABrowser() async throws {
        let key = "console-key-\(UInt64.random(in: 0...UInt64.max))"
        let (process, base) = try await Self.startSimulated(["--api-key", key])
        defer { process.kill() }
        let screenshot = NSTemporaryDirectory() + "console-\(UInt64.random(in: 0...UInt64.max)).png"
        defer { try? FileManager.default.removeItem(atPath: screenshot) }
        let result = try await run(
            ["python3", Self.scripts + "/console_check.py", base + "/", "--api-key", key, "--screenshot", screenshot],
            timeout: .seconds(240))
        #expect(result.status == 0, "\(result.error.suffix(4000))\n\(process.standardError.suffix(2000))")
        let seen = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any] ?? [:]
        #expect((seen["points"] as? Int ?? 0) >= 5)
        let bpm = seen["last_value"] as? Double ?? 0
        #expect((30...250).contains(bpm), "last plotted value \(bpm)")
        #expect((seen["browser_errors"] as? [Any])?.isEmpty == true, "browser errors: \(seen["browser_errors"] ?? "")")
        #expect(seen["shown_error"] as? String == "")
        #expect((seen["services"] as? [String])?.contains { $0.hasPrefix("Heart Rate") } == true, "\(seen)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        process.signal(SIGTERM)
        #expect(await process.wait(timeout: .seconds(30)) == 0)
    }
}
