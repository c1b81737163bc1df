import Foundation
import Glibc
import TestSupport
import Testing

/// The README's walkthrough works verbatim: every curl command in it runs
/// against `blegateway serve --simulate`. Only the port differs from what
/// `make run` uses (a free one instead of 8080), so the test passes while a
/// gateway started by `make run` holds 127.0.0.1:8080.
@Suite struct ReadmeTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md").path

    /// The indented shell lines of the walkthrough that start with curl.
    static func walkthroughCommands() throws -> [String] {
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        guard let start = text.range(of: "## Walkthrough"), let end = text.range(of: "## From a browser") else {
            return []
        }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n")
            .filter { $0.hasPrefix("    curl ") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func theCurlWalkthroughWorksVerbatim() async throws {
        let commands = try Self.walkthroughCommands()
        #expect(commands.count >= 12)
        #expect(commands.allSatisfy { $0.contains("localhost:8080/") }, "the walkthrough's address changed")
        // What `make run` runs, on a free port.
        let gateway = try ChildProcess([GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:0"])
        defer { gateway.kill() }
        guard let port = await GatewayUnderTest.waitForPort(gateway)?.1 else {
            Issue.record("the gateway did not start:\n\(gateway.standardError)")
            return
        }
        for command in commands.map({ $0.replacingOccurrences(of: "localhost:8080/", with: "localhost:\(port)/") }) {
            if command.hasPrefix("curl -sN") {
                // A stream: it runs until stopped; it must deliver events.
                let result = try await run(["timeout", "6", "bash", "-c", command])
                #expect(result.status == 124, "\(command) ended by itself: \(result.error)")
                #expect(result.output.contains("event: "), "\(command) delivered no event:\n\(result.output.prefix(500))")
                continue
            }
            if command.contains("|") {
                // A pipeline: as written, its output is checked.
                let result = try await run(["bash", "-o", "pipefail", "-c", command])
                #expect(result.status == 0 && !result.output.isEmpty, "\(command): \(result.error)")
                continue
            }
            let result = try await run(["bash", "-c", command + " -w '\\n%{http_code}'"])
            let status = String(result.output.split(separator: "\n", omittingEmptySubsequences: false).last ?? "")
            #expect(result.status == 0, "\(command): \(result.error)")
            if command.contains(#""value":"02""#) {
                // The documented error.
                #expect(status == "502", "\(command) -> \(status)")
                #expect(result.output.contains(#""att_error":128"#))
            } else {
                #expect(status.hasPrefix("2"), "\(command) -> \(result.output.suffix(400))")
            }
        }
        gateway.signal(SIGTERM)
        #expect(await gateway.wait(timeout: .seconds(20)) == 0)
    }
}
