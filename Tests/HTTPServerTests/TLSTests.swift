import Foundation
import HTTPServer
import Testing

extension HTTPServerTests {
    @Suite struct TLS {
        /// A throwaway self-signed certificate for 127.0.0.1, made with the
        /// openssl CLI (Debian package `openssl`).
        static func makeCertificate(in directory: URL) async throws -> (certificate: String, key: String) {
            let certificate = directory.appendingPathComponent("cert.pem").path
            let key = directory.appendingPathComponent("key.pem").path
            let result = try await run("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
            try #require(result.status == 0, "openssl failed: \(result.error)")
            return (certificate, key)
        }

        @Test func servesHTTPSWithKeepAliveAndStreams() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try await Self.makeCertificate(in: directory)

            var router = Router()
            router.get("/health") { _ in .text("ok\n") }
            router.get("/events") { _ in
                let writer = StreamWriter()
                for id in 1...3 { writer.write(ServerSentEvent(id: "\(id)", data: "secure \(id)")) }
                writer.finish()
                return .eventStream(writer)
            }
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.tls = try TLSConfiguration(certificateFile: files.certificate, privateKeyFile: files.key)
            try await withServer(router, configuration: configuration) { _, port in
                let url = "https://127.0.0.1:\(port)/health"
                let health = try await curl(["--cacert", files.certificate, "-w", "%{num_connects}\n", url, url])
                #expect(health.output == "ok\n1\nok\n0\n", "\(health.error)")
                let events = try await curl(["--cacert", files.certificate, "-N", "https://127.0.0.1:\(port)/events"])
                #expect(events.output == "id: 1\ndata: secure 1\n\nid: 2\ndata: secure 2\n\nid: 3\ndata: secure 3\n\n")
                let plain = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health"])
                #expect(plain.output != "200", "plain HTTP must not be served on the TLS port")
            }
        }

        @Test func unreadableOrBadCertificateFailsToStart() async throws {
            #expect(throws: ServerError.self) {
                try TLSConfiguration(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem")
            }
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.tls = TLSConfiguration(certificatePEM: "not a certificate", privateKeyPEM: "not a key")
            let server = Server(configuration: configuration, responder: Router(), logger: quietLogger())
            let error = #expect(throws: ServerError.self) { try server.start() }
            #expect(error?.code == .tlsConfiguration)
            #expect(!server.isRunning)
        }
    }
}
