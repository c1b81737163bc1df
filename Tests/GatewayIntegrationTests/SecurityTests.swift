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
        // The key is checked on the head: a client that waits for
        // `100 Continue` gets its 401 without sending the body.
        let upload = try await run([
            "bash", "-c",
            "head -c 500000 /dev/zero | curl -s -o /dev/null -w '%{http_code} %{size_upload}' "
                + "-H 'Expect: 100-continue' -H 'Content-Type: application/json' --data-binary @- "
                + "\(gateway.baseURL)/v1/devices/C4:7C:8D:6A:3E:01/characteristics/2a39/value",
        ])
        #expect(upload.output == "401 0", "\(upload.output) \(upload.error)")
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

    /// A gateway serving HTTPS with a new self-signed certificate (an
    /// elliptic-curve key, or RSA) in a directory of its own.
    func startWithTLS(keyType: [String] = ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]) async throws
        -> (GatewayUnderTest, directory: String)
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try await run(
            ["openssl", "req", "-x509", "-newkey"] + keyType + [
                "-nodes", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1",
                "-subj", "/CN=127.0.0.1",
            ])
        #expect(made.status == 0, "\(made.error)")
        let gateway = try await GatewayUnderTest.start(
            arguments: ["--tls-cert", directory + "/cert.pem", "--tls-key", directory + "/key.pem"])
        return (gateway, directory)
    }

    @Test func httpsWithACertificate() async throws {
        let (gateway, directory) = try await startWithTLS()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(gateway.baseURL.hasPrefix("https://"))
        let adapters = try await gateway.get("/v1/adapters")
        #expect(adapters.status == 200)
        #expect(adapters.headers["strict-transport-security"] == "max-age=31536000")
        let plain = try await run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", gateway.baseURL.replacingOccurrences(of: "https", with: "http") + "/health"])
        #expect(plain.output != "200", "plain HTTP is not served on the TLS port")
        // Nothing older than TLS 1.2, whatever the client offers.
        for version in ["-tls1", "-tls1_1"] {
            let old = try await run([
                "bash", "-c",
                "openssl s_client \(version) -cipher ALL:@SECLEVEL=0 -connect \(gateway.baseURL.dropFirst(8)) </dev/null",
            ])
            #expect(old.output.contains("Cipher is (NONE)"), "\(version) was negotiated:\n\(old.output.prefix(600))")
        }
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

    /// Debian's testssl.sh on the protocols, cipher categories, forward
    /// secrecy, the server's cipher order and the HTTP security headers
    /// (not the certificate, which is self-signed here), with an RSA key
    /// (its static-RSA key exchange must not be offered): nothing it finds
    /// may be MEDIUM or worse.
    @Test func testsslFindsNothingMediumOrWorse() async throws {
        let (gateway, directory) = try await startWithTLS(keyType: ["rsa:2048"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = directory + "/testssl.json"
        let scan = try await run([
            "testssl", "--quiet", "--color", "0", "--warnings", "off", "--ip", "one",
            "--protocols", "--server-preference", "--fs", "--std", "--headers",
            "--jsonfile", report, String(gateway.baseURL.dropFirst(8)),
        ], timeout: .seconds(600))  // a minute on a quiet machine, several on a busy one
        await gateway.stop()
        let data = try Data(contentsOf: URL(fileURLWithPath: report))
        let findings = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]], "\(scan.output)")
        #expect(findings.count > 20, "testssl.sh ran few checks:\n\(scan.output)")
        let serious = findings.filter { ["MEDIUM", "HIGH", "CRITICAL", "WARN"].contains($0["severity"] as? String) }
        #expect(serious.isEmpty, "\(serious.map { "\($0["severity"] ?? "") \($0["id"] ?? ""): \($0["finding"] ?? "")" })")
        let byID = Dictionary(findings.compactMap { f in (f["id"] as? String).map { ($0, f["finding"] as? String ?? "") } }) { a, _ in a }
        #expect(byID["TLS1"]?.hasPrefix("not offered") == true)
        #expect(byID["TLS1_1"]?.hasPrefix("not offered") == true)
        #expect(byID["cipher_order"] == "server")
        #expect(byID["HSTS_time"] != nil)
    }
}
