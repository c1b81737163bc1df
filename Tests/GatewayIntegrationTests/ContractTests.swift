import BlueZ
import DBus
import Foundation
import GatewayAPI
import TestSupport
import Testing

/// openapi.yaml is the contract: valid, and exactly the routes the gateway
/// serves.
@Suite struct ContractTests {
    /// openapi.yaml at the root of the checkout.
    static let specPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("openapi.yaml").path

    @Test func theSpecIsValidOpenAPI32() async throws {
        let result = try await run([
            "python3", "-c",
            """
            import sys
            from openapi_spec_validator import validate
            from openapi_spec_validator.readers import read_from_filename
            spec, _ = read_from_filename(sys.argv[1])
            validate(spec)
            print(spec["openapi"])
            """,
            Self.specPath,
        ])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "3.2.0")
    }

    /// `METHOD /path` for every operation in the spec.
    static func specOperations() throws -> Set<String> {
        let text = try String(contentsOfFile: specPath, encoding: .utf8)
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, let first = line.first, first != " " { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "patch", "delete"].contains(method) {
                    operations.insert("\(method.uppercased()) \(path)")
                }
            }
        }
        return operations
    }

    @Test func theRouterServesExactlyTheSpecsPaths() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer { connection.close() }
        let gateway = Gateway(central: Central(connection: connection))
        let routes = Set(gateway.router().routes.map { "\($0.method.rawValue) \($0.pattern)" })
        let spec = try Self.specOperations()
        #expect(spec.count > 15)
        #expect(routes.subtracting(spec).isEmpty, "served but not in openapi.yaml: \(routes.subtracting(spec).sorted())")
        #expect(spec.subtracting(routes).isEmpty, "in openapi.yaml but not served: \(spec.subtracting(routes).sorted())")
    }

    /// schemathesis generates requests from openapi.yaml (valid and
    /// invalid ones) against the running gateway and checks every answer
    /// against the spec, with every check and in every phase (examples,
    /// coverage, fuzzing, and stateful sequences that follow the spec's
    /// links from scan results to devices and their GATT routes); the
    /// gateway must never answer 500. Streams are included: each event is
    /// validated against its stream's `itemSchema`, and the hooks in
    /// Tests/schemathesis keep valid streams, scans and timeouts short (a
    /// connect or pair given a short timeout still takes a few seconds to
    /// give up cleanly, more on a loaded machine: hence the 30 s request
    /// timeout rather than schemathesis's 10 s). One
    /// worker: schemathesis's generator is not thread-safe on CPython 3.11
    /// (`SystemError: AST constructor recursion depth mismatch`).
    @Test(.timeLimit(.minutes(15))) func schemathesisFindsNothing() async throws {
        let gateway = try await GatewayUnderTest.start()
        // Devices for the generated requests to find.
        _ = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":500}"#)
        let hooks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schemathesis").path
        let script = """
            SCHEMATHESIS_HOOKS=blegateway_checks PYTHONPATH="\(hooks)" \
            schemathesis run "\(Self.specPath)" --url "\(gateway.baseURL)" \
              --checks all --exclude-checks not_a_server_error \
              --phases examples,coverage,fuzzing,stateful \
              --max-examples 15 --workers 1 --request-timeout 30 --max-response-time 130 \
              --generation-deterministic --no-color
            """
        let result = try await run(["sh", "-c", script], timeout: .seconds(14 * 60))
        let summary = result.output.components(separatedBy: "\n").suffix(30).joined(separator: "\n")
        #expect(result.status == 0, "schemathesis found problems:\n\(result.output.suffix(6000))\n\(result.error.suffix(2000))")
        print(summary)
        #expect(await gateway.stop() == 0)
    }

    /// The bodies schemathesis does not see, validated against the spec:
    /// a scan's result, and the data of every kind of stream event.
    @Test func responsesOutsideSchemathesisMatchTheSpec() async throws {
        let gateway = try await GatewayUnderTest.start()
        let events = try gateway.stream("/v1/events")
        let scans = try gateway.stream("/v1/scan")
        let scan = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":400,"rssi":-100}"#)
        let device = "/v1/devices/\(TestScenario.strap)"
        _ = try await gateway.request("POST", device + "/connect")
        let notifications = try gateway.stream(device + "/characteristics/2a37/notifications?encoding=base64")
        _ = await notifications.waitFor(2, of: "notification")
        _ = try await gateway.get(device + "/characteristics/2a38/value")
        try await gateway.simulator.dropConnection(.init(TestScenario.strap).unsafelyUnwrapped)
        _ = await notifications.waitFor(1, of: "subscription-ended")
        _ = await events.waitFor { $0.contains { $0.type == "device-disconnected" } }
        let gap = try gateway.stream("/v1/events?last_event_id=0")
        _ = await gap.waitFor(1, of: "adapter-state", timeout: .seconds(2))
        let failed = try await gateway.get(device + "/characteristics/2a38/value")

        var documents: [(schema: String, json: String)] = [("ScanResult", scan.text), ("Problem", failed.text)]
        documents += scans.events.map { ($0.type == "scan-interrupted" ? "ScanStopped" : "ScanEvent", $0.data) }
        for event in events.events { documents.append(("GatewayEvent", event.data)) }
        for event in notifications.events {
            documents.append((event.type == "notification" ? "Notification" : "SubscriptionEnded", event.data))
        }
        let kinds = Set(events.events.map(\.type))
        #expect(kinds.isSuperset(of: ["device-discovered", "device-connected", "services-resolved", "device-disconnected"]))
        #expect(documents.count > 10)
        // The validator itself can fail: a wrong document is caught.
        let control = try await SpecValidator.problems([("Notification", #"{"address":"nope","value":1}"#)])
        #expect(control.count >= 3, "\(control)")
        let problems = try await SpecValidator.problems(documents)
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))")
        for stream in [events, scans, notifications, gap] { stream.close() }
        await gateway.stop()
    }
}
