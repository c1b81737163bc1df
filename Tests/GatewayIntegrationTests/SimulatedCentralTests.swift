import Foundation
import Glibc
import Testing
import TestSupport

/// The README's peripheral walkthrough on `blegateway serve --simulate`: the
/// simulator's control interface is on the private bus the log names, so a
/// simulated remote central reads, subscribes and receives notifications
/// with busctl, as docs/simulator.md shows.
@Suite struct SimulatedCentralTests {
    @Test(.timeLimit(.minutes(3))) func aCentralOnTheSimulateBusUsesAPublishedApplication() async throws {
        let (process, base) = try await ObservabilityTests.startSimulated([])
        defer { process.kill() }
        let log = process.standardError
        let marker = "busctl --address="
        let address = try #require(
            log.range(of: marker).map { String(log[$0.upperBound...].prefix { !$0.isWhitespace }) },
            "no control address in the log:\n\(log)")
        func ctl(_ arguments: String...) async throws -> String {
            let result = try await run(
                ["busctl", "--address=\(address)", "call", "org.blegateway.Simulator", "/org/blegateway/simulator",
                 "org.blegateway.Simulator1"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let published = try await run([
            "curl", "-s", "--json",
            #"{"services":[{"uuid":"180d","characteristics":[{"uuid":"2a37","flags":["read","notify"],"value":"0048"}]}]}"#,
            base + "/v1/peripheral/applications",
        ])
        #expect(published.output.contains(#""registered":true"#), "\(published.output)")
        let id = try #require(
            (try? JSONSerialization.jsonObject(with: Data(published.output.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try await ctl("CentralRead", "ss", "hci0", "2a37") == "ay 2 0 72")
        _ = try await ctl("CentralSubscribe", "ss", "hci0", "2a37")
        let notified = try await run([
            "curl", "-s", "-X", "PUT", "--json", #"{"value":"0050"}"#,
            base + "/v1/peripheral/applications/\(id)/characteristics/2a37/value",
        ])
        #expect(notified.output.contains(#""notified":true"#), "\(notified.output)")
        let deadline = ContinuousClock.now + .seconds(30)
        var received = try await ctl("CentralReceived", "ss", "hci0", "2a37")
        while !received.contains("2 0 80"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            received = try await ctl("CentralReceived", "ss", "hci0", "2a37")
        }
        #expect(received.contains("2 0 80"), "\(received)")
        process.signal(SIGTERM)
        #expect(await process.wait(timeout: .seconds(30)) == 0)
    }
}
