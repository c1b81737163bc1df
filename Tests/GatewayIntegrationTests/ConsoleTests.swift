import BlueZSimulator
import DBus
import Foundation
import TestSupport
import Testing

/// The web console driven through every view in two browser engines
/// (Tests/observability/console_check.py): headless Chromium, and WebKitGTK
/// under Xvfb. The gateway serves the default scenario plus a lock that
/// pairs by numeric comparison and a hostile device; the simulator's
/// control interface, exported on the test's bus, plays the remote central
/// of the peripheral role; the gateway's agent has a keyboard and a
/// display, so the smart plug's protected value asks for a passkey.
@Suite(.serialized) struct ConsoleTests {
    static let observability = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("observability").path

    @Test(.timeLimit(.minutes(6)), arguments: ["chromium", "webkit"])
    func everyViewWorksInTheBrowser(_ browser: String) async throws {
        let devices = try String(contentsOfFile: Self.observability + "/console-devices.yaml", encoding: .utf8)
        let key = "console-key-\(UInt64.random(in: 0...UInt64.max))"
        let gateway = try await GatewayUnderTest.start(
            scenario: Scenario.defaultYAML + devices, arguments: ["--api-key", key, "--agent-capability", "KeyboardDisplay"])
        let control = try await gateway.bus.connect()
        try await SimulatorControl.export(gateway.simulator, on: control)
        let screenshots = NSTemporaryDirectory() + "console-\(browser)-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        // BLEGATEWAY_CONSOLE_SCREENSHOTS keeps them (to look at, or to
        // refresh docs/console.png).
        let kept = ProcessInfo.processInfo.environment["BLEGATEWAY_CONSOLE_SCREENSHOTS"]
        defer { if kept == nil { try? FileManager.default.removeItem(atPath: screenshots) } }
        let check = [
            "python3", Self.observability + "/console_check.py", gateway.baseURL + "/", "--api-key", key,
            "--bus", gateway.bus.address, "--browser", browser, "--screenshots", kept ?? screenshots,
        ]
        let result = try await run(browser == "webkit" ? ["xvfb-run", "-a"] + check : check, timeout: .seconds(300))
        #expect(result.status == 0, "\(result.error.suffix(4000))\n\(gateway.process.standardError.suffix(3000))")
        let seen = (try? JSONSerialization.jsonObject(with: Data(result.output.utf8))) as? [String: Any] ?? [:]
        #expect((seen["points"] as? Int ?? 0) >= 5, "\(seen)")
        #expect((seen["browser_errors"] as? [Any])?.isEmpty == true, "\(seen)")
        #expect((seen["screenshots"] as? [String])?.count == (browser == "chromium" ? 11 : 6), "\(seen)")
        control.close()
        #expect(await gateway.stop() == 0)
    }
}
