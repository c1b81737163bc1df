import Foundation
import TestSupport
import Testing

@Suite struct SecurityTests {
    func expectAPIKeyEnforced(_ gateway: GatewayUnderTest, key: String) async throws {
        let missing = try await gateway.get("/v1/adapters")
        #expect(missing.status == 401)
        #expect(missing.contentType == "application/problem+json")
        #expect(missing.object["type"] as? String == "urn:blegateway:problem:unauthorized")
        #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        #expect(try await gateway.get("/v1/adapters", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await gateway.get("/v1/adapters", headers: ["Authorization": "Bearer \(key)"]).status == 200)
        #expect(try await gateway.get("/v1/adapters?access_token=\(key)").status == 200)
        #expect(try await gateway.get("/openapi.yaml").status == 401)
        // Liveness probes need no key.
        #expect(try await gateway.get("/health").status == 200)
        // Streams too: EventSource passes the key in the query.
        let stream = try gateway.stream("/v1/events?access_token=\(key)")
        _ = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":200}"#, headers: ["Authorization": "Bearer \(key)"])
        #expect(await stream.waitFor { !$0.isEmpty }.isEmpty == false)
        stream.close()
    }

    @Test func theAPIKeyFromTheCommandLine() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--api-key", "s3cret-k3y"])
        try await expectAPIKeyEnforced(gateway, key: "s3cret-k3y")
        await gateway.stop()
    }

    @Test func theAPIKeyFromTheEnvironment() async throws {
        let gateway = try await GatewayUnderTest.start(environment: ["BLEGATEWAY_API_KEY": "from-env"])
        try await expectAPIKeyEnforced(gateway, key: "from-env")
        await gateway.stop()
    }

    @Test func corsForBrowserClients() async throws {
        let gateway = try await GatewayUnderTest.start(arguments: ["--cors-origin", "http://app.example"])
        let preflight = try await gateway.request(
            "OPTIONS", "/v1/devices/C4:7C:8D:6A:3E:01/characteristics/2a39/value",
            headers: ["Origin": "http://app.example", "Access-Control-Request-Method": "PUT"])
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "http://app.example")
        #expect(preflight.headers["access-control-allow-methods"]?.contains("PUT") == true)
        let get = try await gateway.get("/v1/adapters", headers: ["Origin": "http://app.example"])
        #expect(get.headers["access-control-allow-origin"] == "http://app.example")
        let other = try await gateway.get("/v1/adapters", headers: ["Origin": "http://elsewhere.example"])
        #expect(other.headers["access-control-allow-origin"] == nil)
        await gateway.stop()
    }

    @Test func httpsWithACertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try await run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1",
        ])
        #expect(made.status == 0, "\(made.error)")
        let gateway = try await GatewayUnderTest.start(
            arguments: ["--tls-cert", directory + "/cert.pem", "--tls-key", directory + "/key.pem"])
        #expect(gateway.baseURL.hasPrefix("https://"))
        #expect(try await gateway.get("/v1/adapters").status == 200)
        let plain = try await run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", gateway.baseURL.replacingOccurrences(of: "https", with: "http") + "/health"])
        #expect(plain.output != "200", "plain HTTP is not served on the TLS port")
        // `blegateway health` (the image's HEALTHCHECK) over https: a
        // self-signed certificate is refused unless --insecure says so.
        let verified = try await run([GatewayUnderTest.executable, "health", "--url", gateway.baseURL])
        #expect(verified.status == 1)
        #expect(verified.output.contains("TLS with \(gateway.baseURL) failed") && verified.output.contains("--insecure"), "\(verified.output)")
        let insecure = try await run([GatewayUnderTest.executable, "health", "--url", gateway.baseURL, "--insecure"])
        #expect(insecure.status == 0, "\(insecure.output)\(insecure.error)")
        #expect(insecure.output.hasPrefix("ok: "), "\(insecure.output)")
        await gateway.stop()
    }
}
