import Foundation
import Testing
import TestSupport

/// docs/grafana-dashboard.json against a real Prometheus (Debian's
/// `prometheus`, on a loopback port) that scrapes the real gateway: every
/// query of every panel returns data through Prometheus's HTTP query API.
@Suite struct GrafanaDashboardTests {
    static let strap = TestScenario.strap
    static let dashboard = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/grafana-dashboard.json")

    /// Every `expr` of every panel's targets.
    static func queries() throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: dashboard)) as? [String: Any]
        let panels = object?["panels"] as? [[String: Any]] ?? []
        return panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
    }

    @Test(.timeLimit(.minutes(5))) func everyPanelQueryReturnsDataFromAScrapedGateway() async throws {
        let queries = try Self.queries()
        #expect(queries.count >= 20)
        let broker = try await Broker.start()
        let gateway = try await GatewayUnderTest.start(arguments: ["--mqtt", broker.url])
        // Use that the panels show: a connection, a read, a refused write
        // (a D-Bus error), and notifications.
        try await gateway.discover(Self.strap)
        #expect(try await gateway.request("POST", "/v1/devices/\(Self.strap)/connect").status == 200)
        #expect(try await gateway.get("/v1/devices/\(Self.strap)/characteristics/2a38/value").status == 200)
        let refused = try await gateway.request(
            "PUT", "/v1/devices/\(Self.strap)/characteristics/2a39/value", json: #"{"value":"02"}"#)
        #expect(refused.status == 502)
        let stream = try gateway.stream("/v1/devices/\(Self.strap)/characteristics/2a37/notifications")
        defer { stream.close() }
        #expect(await stream.waitFor(2, of: "notification").count >= 2)

        let prometheus = try await PrometheusUnderTest.start(scraping: gateway.baseURL)
        defer { prometheus.stop() }
        var missing = queries
        let deadline = ContinuousClock.now + .seconds(120)
        while !missing.isEmpty, ContinuousClock.now < deadline {
            var stillMissing: [String] = []
            for query in missing where try await prometheus.query(query).isEmpty { stillMissing.append(query) }
            missing = stillMissing
            if !missing.isEmpty { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(missing.isEmpty, "queries without data: \(missing)\n\(prometheus.process.standardError.suffix(2000))")
        #expect(await gateway.stop() == 0)
        await broker.stop()
    }
}

/// Debian's `prometheus` on a free loopback port, scraping one target every
/// second into a temporary directory.
struct PrometheusUnderTest {
    let process: ChildProcess
    let port: Int
    let directory: String

    static func start(scraping baseURL: String) async throws -> PrometheusUnderTest {
        guard let target = URL(string: baseURL), let host = target.host, let targetPort = target.port else {
            throw GatewayTestError("not a base URL: \(baseURL)")
        }
        let directory = NSTemporaryDirectory() + "prometheus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: blegateway
                static_configs:
                  - targets: ["\(host):\(targetPort)"]

            """
        try configuration.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        let port = try freePort()
        let process = try ChildProcess([
            "prometheus", "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ])
        let prometheus = PrometheusUnderTest(process: process, port: port, directory: directory)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let ready = try? await run(["curl", "-sf", "http://127.0.0.1:\(port)/-/ready"]), ready.status == 0 {
                return prometheus
            }
            if await process.wait(timeout: .milliseconds(200)) != nil { break }
        }
        prometheus.stop()
        throw GatewayTestError("prometheus did not start:\n\(process.standardError)")
    }

    /// The result of an instant query (`/api/v1/query`); throws when
    /// Prometheus refuses the query.
    func query(_ expression: String) async throws -> [Any] {
        let answer = try await run([
            "curl", "-s", "--data-urlencode", "query=\(expression)", "http://127.0.0.1:\(port)/api/v1/query",
        ])
        let object = try JSONSerialization.jsonObject(with: Data(answer.output.utf8)) as? [String: Any]
        guard object?["status"] as? String == "success", let data = object?["data"] as? [String: Any] else {
            throw GatewayTestError("prometheus refused \(expression): \(answer.output)")
        }
        return data["result"] as? [Any] ?? []
    }

    func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
