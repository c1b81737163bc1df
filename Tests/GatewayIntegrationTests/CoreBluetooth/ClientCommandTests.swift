import Foundation
import Glibc
import TestSupport
import Testing

/// The `blegateway` client commands against the real gateway on the
/// simulator, as an operator runs them.
@Suite struct ClientCommandTests {
    /// Runs `blegateway ARGUMENTS` against the gateway.
    func blegateway(_ gateway: GatewayUnderTest, _ arguments: String...) async throws -> (status: Int32, output: String, error: String) {
        try await run([GatewayUnderTest.executable] + arguments, environment: ["BLEGATEWAY_URL": gateway.baseURL])
    }

    @Test func anOperatorsDay() async throws {
        let gateway = try await GatewayUnderTest.start()
        let strap = TestScenario.strap

        // Long enough for the simulator's devices to be heard on a loaded
        // machine: the test checks the listing and the filter, not speed.
        let scan = try await blegateway(gateway, "scan", "--service", "180d", "--duration", "10")
        #expect(scan.status == 0, "\(scan.error)")
        #expect(scan.output.hasPrefix("ADDRESS"))
        #expect(scan.output.contains(strap) && scan.output.contains("Strap 3E01") && !scan.output.contains(TestScenario.beacon), "\(scan.output)")
        let devices = try await blegateway(gateway, "devices", "--json")
        #expect(devices.status == 0)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(devices.output.utf8)) as? [[String: Any]])
        #expect(listed.contains { $0["address"] as? String == strap })

        let connect = try await blegateway(gateway, "connect", strap.lowercased())
        #expect(connect.status == 0 && connect.output.contains("yes"), "\(connect)")
        let gatt = try await blegateway(gateway, "gatt", strap)
        #expect(gatt.status == 0)
        #expect(gatt.output.contains("service 180D") && gatt.output.contains("characteristic 2A37  notify"), "\(gatt.output)")
        let read = try await blegateway(gateway, "read", strap, "2a38")
        #expect(read.status == 0 && read.output == "01\n", "\(read)")
        let ambiguous = try await blegateway(gateway, "read", strap, "2a19")
        #expect(ambiguous.status == 4 && ambiguous.error.contains("--service"), "\(ambiguous)")
        let battery = try await blegateway(gateway, "read", strap, "2a19", "--service", "180f", "--json")
        #expect(battery.status == 4, "two 180F services: still ambiguous \(battery)")
        let written = try await blegateway(gateway, "write", strap, "2a39", "01")
        #expect(written.status == 0, "\(written)")
        let refused = try await blegateway(gateway, "write", strap, "2a39", "02")
        #expect(refused.status == 6 && refused.error.contains("ATT error 0x80"), "\(refused)")
        let badValue = try await blegateway(gateway, "write", strap, "2a39", "zz")
        #expect(badValue.status == 64 && badValue.error.contains("not hex"), "\(badValue)")

        // notify follows until stopped.
        let notify = try ChildProcess(
            [GatewayUnderTest.executable, "notify", strap, "2a37"], environment: ["BLEGATEWAY_URL": gateway.baseURL])
        #expect(await notify.waitForOutput(containing: "\n", timeout: .seconds(30)))
        let deadline = ContinuousClock.now + .seconds(30)
        while notify.standardOutput.split(separator: "\n").count < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(notify.standardOutput.split(separator: "\n").count >= 3)
        #expect(notify.standardOutput.split(separator: "\n").allSatisfy { $0.count >= 4 && $0.allSatisfy(\.isHexDigit) })
        notify.signal(SIGINT)
        #expect(await notify.wait(timeout: .seconds(10)) != nil)

        // keep, events (replayed from the start, so none is missed) and subscribe.
        let keep = try await blegateway(gateway, "keep", strap)
        #expect(keep.status == 0 && keep.output.contains(strap), "\(keep)")
        let events = try ChildProcess(
            [GatewayUnderTest.executable, "events", "--type", "kept-connected", "--json", "--after", "0"],
            environment: ["BLEGATEWAY_URL": gateway.baseURL])
        #expect(await events.waitForOutput(containing: #""type":"kept-connected""#, timeout: .seconds(30)), "\(events.standardError)")
        events.kill()
        let kept = try await blegateway(gateway, "keep", "--json")
        #expect(kept.output.contains(strap))
        #expect(try await blegateway(gateway, "keep", strap, "--release").status == 0)
        let subscribe = try await blegateway(gateway, "subscribe", strap, "2a37", "--service", "180d", "--json")
        #expect(subscribe.status == 0, "\(subscribe)")
        let id = try #require((try JSONSerialization.jsonObject(with: Data(subscribe.output.utf8)) as? [String: Any])?["id"] as? Int)
        #expect(try await blegateway(gateway, "subscribe").output.contains(strap))
        #expect(try await blegateway(gateway, "subscribe", "--delete", String(id)).status == 0)
        #expect(try await blegateway(gateway, "subscribe", "--delete", String(id)).status == 3)

        let pair = try await blegateway(gateway, "pair", strap)
        #expect(pair.status == 5, "the strap refuses pairing: \(pair)")
        let disconnect = try await blegateway(gateway, "disconnect", strap)
        #expect(disconnect.status == 0 && disconnect.output.contains("no"), "\(disconnect)")
        let unknown = try await blegateway(gateway, "read", "00:11:22:33:44:55", "2a38")
        #expect(unknown.status == 3 && !unknown.error.isEmpty, "\(unknown)")

        let version = try await blegateway(gateway, "version")
        #expect(version.status == 0 && version.output.hasPrefix("blegateway ") && version.output.contains("gateway blegateway"), "\(version)")
        await gateway.stop()

        let unreachable = try await blegateway(gateway, "devices")
        #expect(unreachable.status == 9 && unreachable.error.contains("cannot reach the gateway"), "\(unreachable)")
    }

    @Test func serveCanPrintItsConfiguration() async throws {
        let printed = try await run(
            [GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:9999", "--print-config"],
            environment: ["BLEGATEWAY_API_KEY": "secret"])
        #expect(printed.status == 0, "\(printed.error)")
        #expect(printed.output.contains("listen: 127.0.0.1:9999"))
        #expect(printed.output.contains("simulate: builtin"))
        #expect(printed.output.contains("api-key: (set)") && !printed.output.contains("secret"), "\(printed.output)")
    }

    /// Every command of blegateway-client is reached through blegateway
    /// (the hand-over's list and the client's subcommands agree), and a
    /// blegateway without its client says what is missing.
    @Test func blegatewayHandsEveryClientCommandOver() async throws {
        let client = URL(fileURLWithPath: GatewayUnderTest.executable).deletingLastPathComponent()
            .appendingPathComponent("blegateway-client").path
        let help = try await run([client, "--help"])
        #expect(help.status == 0, "\(help.error)")
        let listing = help.output.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        let commands = listing.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else { return nil }
            return word.allSatisfy(\.isLowercase) ? String(word) : nil
        }
        #expect(commands.count >= 13, "\(help.output)")
        for command in commands {
            let handed = try await run([GatewayUnderTest.executable, command, "--help"])
            #expect(handed.status == 0, "blegateway \(command) --help: \(handed.error)")
            #expect(handed.output.contains("USAGE: blegateway \(command)"), "blegateway \(command) --help: \(handed.output)")
        }
        let version = try await run([GatewayUnderTest.executable, "version"])
        #expect(version.output.hasPrefix("blegateway "), "\(version.output) \(version.error)")

        // A copy of the server alone, in a directory without the client.
        let directory = "/tmp/blegateway-alone-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: GatewayUnderTest.executable, toPath: directory + "/blegateway")
        let alone = try await run([directory + "/blegateway", "scan"], environment: ["PATH": "/nonexistent"])
        #expect(alone.status == 127, "\(alone.output) \(alone.error)")
        #expect(alone.error.contains("blegateway-client"), "\(alone.error)")
    }
}
