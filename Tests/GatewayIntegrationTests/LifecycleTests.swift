import DBus
import Foundation
import Glibc
import TestSupport
import Testing

/// Starting, stopping and failing to start, as an operator sees it.
@Suite struct LifecycleTests {
    @Test func sigtermEndsWhatTheGatewayStarted() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap, TestScenario.slow, TestScenario.beacon)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let notifications = try gateway.stream(device + "/characteristics/2a37/notifications")
        let scan = try gateway.stream("/v1/scan")
        _ = await notifications.waitFor(1, of: "notification")
        _ = await scan.waitFor(1, of: "discovered")
        let monitor = try ChildProcess(["busctl", "--address=\(gateway.bus.address)", "monitor", "org.bluez"])
        try await Task.sleep(for: .milliseconds(300))

        let started = ContinuousClock.now
        let status = await gateway.stop()
        #expect(status == 0, "\(gateway.process.standardError.suffix(2000))")
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(await notifications.hasEnded(within: .seconds(5)))
        #expect(await scan.hasEnded(within: .seconds(5)))
        let calls = monitor.standardOutput
        monitor.kill()
        for member in ["StopDiscovery", "Disconnect"] {
            #expect(calls.contains("Member=\(member)"), "the gateway did not call \(member) on its way out")
        }
        // The notifications came through AcquireNotify: closing the socket
        // is their StopNotify, and bluetoothd then reports NotifyAcquired false.
        #expect(
            calls.contains("Member=StopNotify") || calls.contains("\"NotifyAcquired\""),
            "the gateway did not end its notifications on its way out")
        #expect(gateway.process.standardError.contains("stopped"))
    }

    @Test func sigtermSendsEveryStreamItsLastEventBeforeClosingIt() async throws {
        let gateway = try await GatewayUnderTest.start()
        try await gateway.discover(TestScenario.strap)
        let device = "/v1/devices/\(TestScenario.strap)"
        #expect(try await gateway.request("POST", device + "/connect").status == 200)
        let notifications = try gateway.stream(device + "/characteristics/2a37/notifications")
        let sharing = try gateway.stream(device + "/characteristics/2a37/notifications?encoding=base64")
        let scan = try gateway.stream("/v1/scan")
        let events = try gateway.stream("/v1/events")
        let filtered = try gateway.stream("/v1/events?type=device-lost")
        _ = await notifications.waitFor(1, of: "notification")
        _ = await sharing.waitFor(1, of: "notification")
        _ = await scan.waitFor(1, of: "discovered")
        _ = await events.waitFor { !$0.isEmpty }
        // The filtered stream has no event to send: its first heartbeat
        // comment (every 0.2 s here) shows that it is open.
        #expect(await filtered.process.waitForOutput(containing: ":", timeout: .seconds(20)))

        #expect(await gateway.stop() == 0, "\(gateway.process.standardError.suffix(2000))")
        for (stream, type) in [
            (notifications, "subscription-ended"), (sharing, "subscription-ended"), (scan, "scan-stopped"),
            (events, "gateway-stopping"), (filtered, "gateway-stopping"),
        ] {
            #expect(await stream.hasEnded(within: .seconds(10)))
            let last = stream.events.last
            #expect(last?.type == type, "\(stream.events.suffix(3))")
            #expect(last?.id != nil)
            if type == "subscription-ended" { #expect(last?.json["reason"] as? String == "gateway-stopping") }
        }
        #expect(gateway.process.standardError.contains("ending 5 open stream(s)"), "\(gateway.process.standardError.suffix(1500))")
    }

    func startFailure(_ arguments: [String]) async throws -> (status: Int32?, log: String) {
        let process = try ChildProcess([GatewayUnderTest.executable, "serve"] + arguments)
        let status = await process.wait(timeout: .seconds(30))
        process.kill()
        return (status, process.standardError)
    }

    @Test func clearStartupErrors() async throws {
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let noBus = try await startFailure([
            "--bus", "unix:path=/nonexistent/bus", "--listen", "127.0.0.1:0", "--state-dir", stateDirectory,
        ])
        #expect(noBus.status == 2)
        #expect(noBus.log.contains("cannot connect to the unix:path=/nonexistent/bus"), "\(noBus.log)")

        let gateway = try await GatewayUnderTest.start()
        let port = gateway.baseURL.split(separator: ":").last.map(String.init) ?? "0"
        let busy = try await startFailure([
            "--bus", gateway.bus.address, "--listen", "127.0.0.1:\(port)", "--state-dir", stateDirectory,
        ])
        #expect(busy.status == 2)
        #expect(busy.log.contains("Address already in use"), "\(busy.log)")
        // What started before the server stops in order: the API, then (last) the store.
        let apiStopped = busy.log.range(of: "stopping: ending 0 open stream(s)")
        let storeClosed = busy.log.range(of: "the state store is closed")
        #expect(apiStopped != nil && storeClosed != nil, "\(busy.log)")
        if let apiStopped, let storeClosed { #expect(apiStopped.lowerBound < storeClosed.lowerBound, "\(busy.log)") }
        await gateway.stop()

        let badScenario = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        try "devices:\n  - address: nowhere\n".write(toFile: badScenario, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: badScenario) }
        let scenario = try await startFailure(["--simulate", badScenario, "--listen", "127.0.0.1:0"])
        #expect(scenario.status == 2)
        #expect(scenario.log.contains(badScenario + ":2:"), "the error names the file and line: \(scenario.log)")

        let badOption = try await startFailure(["--listen", "here"])
        #expect(badOption.status != 0)
        #expect(badOption.log.contains("--listen"))
    }

    /// The store opens while the bus connects and the simulator starts:
    /// when the store cannot be used and the other start fails too, the
    /// store's error (which names the state directory's fix) is the one
    /// reported, even when the other failed first. Here the other fails at
    /// once, and the store only after trying a held lock again for a while.
    @Test func aStoreThatCannotBeUsedIsTheErrorReportedWhenTheBusFailsToo() async throws {
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        // Held as another gateway would hold it.
        let lock = open(stateDirectory + "/blegateway.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        defer { close(lock) }
        let noBus = try await startFailure([
            "--bus", "unix:path=/nonexistent/bus", "--listen", "127.0.0.1:0", "--state-dir", stateDirectory,
        ])
        #expect(noBus.status == 2)
        #expect(noBus.log.contains("is in use by another process"), "\(noBus.log)")
        #expect(!noBus.log.contains("cannot connect to the"), "\(noBus.log)")

        let badScenario = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        try "devices:\n  - address: nowhere\n".write(toFile: badScenario, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: badScenario) }
        let scenario = try await startFailure([
            "--simulate", badScenario, "--listen", "127.0.0.1:0", "--state-dir", stateDirectory,
        ])
        #expect(scenario.status == 2)
        #expect(scenario.log.contains("is in use by another process"), "\(scenario.log)")
        #expect(!scenario.log.contains(badScenario + ":2:"), "\(scenario.log)")
    }

    /// A bus whose policy refuses this user's calls to bluetoothd stops the
    /// start (exit 2) with the policy's fix. The check runs while the
    /// central reads BlueZ's objects, which reads the refusal as bluetoothd
    /// being away: that is not said first.
    @Test func aPolicyThatRefusesCallsToBluetoothdStopsTheStart() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policy = BusDaemon.configuration(listen: "unix:path=\(directory)/bus").replacingOccurrences(
            of: "</policy>", with: "  <deny send_destination=\"org.bluez\"/>\n  </policy>")
        try policy.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        let daemon = try ChildProcess(["dbus-daemon", "--nofork", "--config-file=\(directory)/bus.conf", "--print-address=1"])
        defer { daemon.kill() }
        #expect(await daemon.waitForOutput(containing: "unix:path="))
        let address = daemon.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        let bluetoothd = try await Connection.connect(to: .address(address))
        defer { bluetoothd.close() }
        #expect(try await bluetoothd.requestName("org.bluez") == .primaryOwner)
        for state in ["fresh", "restarted"] {
            let refused = try await startFailure([
                "--bus", address, "--listen", "127.0.0.1:0", "--state-dir", directory + "/state",
            ])
            #expect(refused.status == 2, "\(state): \(refused.log)")
            #expect(refused.log.contains("the bus's policy refuses this user"), "\(state): \(refused.log)")
            #expect(!refused.log.contains("bluetoothd is not running"), "\(state): \(refused.log)")
        }
    }

    @Test func withoutBluetoothdTheGatewayStartsAndSaysSo() async throws {
        let bus = try TestBus()
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        let process = try ChildProcess([
            GatewayUnderTest.executable, "serve", "--bus", bus.address, "--listen", "127.0.0.1:0",
            "--state-dir", stateDirectory,
        ])
        defer {
            process.kill()
            try? FileManager.default.removeItem(atPath: stateDirectory)
        }
        guard let (_, port) = await GatewayUnderTest.waitForPort(process) else {
            Issue.record("no start: \(process.standardError)")
            return
        }
        #expect(process.standardError.contains("bluetoothd is not running"))
        let health = try await run(["curl", "-s", "http://127.0.0.1:\(port)/health"])
        #expect(health.output.contains(#""bluez":"unavailable""#))
        let adapters = try await run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/v1/adapters"])
        #expect(adapters.output == "503")
    }

    @Test func theBuiltInSimulator() async throws {
        let process = try ChildProcess([GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:0"])
        defer { process.kill() }
        guard let (_, port) = await GatewayUnderTest.waitForPort(process) else {
            Issue.record("no start: \(process.standardError)")
            return
        }
        let base = "http://127.0.0.1:\(port)"
        let info = try await run(["curl", "-s", base + "/v1"])
        #expect(info.output.contains(#""simulated":true"#))
        let scan = try await run(["curl", "-s", "--json", #"{"duration_ms":2500}"#, base + "/v1/scan"])
        for name in ["Polar H10 6A3E01", "Thermo 1B07", "Smart Plug 419C"] {
            #expect(scan.output.contains(name), "\(scan.output.prefix(500))")
        }
        let health = try await run([GatewayUnderTest.executable, "health", "--url", base + "/health"])
        #expect(health.status == 0)
        // The base URL, as the README gives it, names the same check.
        let byBase = try await run([GatewayUnderTest.executable, "health", "--url", base])
        #expect(byBase.status == 0, "\(byBase.output) \(byBase.error)")
        process.signal(SIGINT)
        #expect(await process.wait(timeout: .seconds(15)) == 0, "SIGINT stops it cleanly")
        let down = try await run([GatewayUnderTest.executable, "health", "--url", base + "/health", "--timeout", "1"])
        #expect(down.status == 1)
    }

    /// Any option can come from the environment (`BLEGATEWAY_` and its
    /// name); the command line wins, and a bad value names the option.
    @Test func theEnvironmentSetsAnyOptionAndTheCommandLineWins() async throws {
        let printed = try await run(
            [GatewayUnderTest.executable, "serve", "--simulate", "--listen", "127.0.0.1:9999", "--print-config"],
            environment: [
                "BLEGATEWAY_LISTEN": "127.0.0.1:7000", "BLEGATEWAY_MAX_CONNECTIONS": "64",
                "BLEGATEWAY_CORS_ORIGINS": "https://a.example, https://b.example", "BLEGATEWAY_DEFAULT_AGENT": "0",
                "BLEGATEWAY_HEARTBEAT_INTERVAL": "2",
            ])
        #expect(printed.status == 0, "\(printed.error)")
        for line in [
            "listen: 127.0.0.1:9999", "max-connections: 64", "cors-origins: https://a.example,https://b.example",
            "default-agent: false", "heartbeat-interval: 2.0 seconds",
        ] {
            #expect(printed.output.contains(line), "\(line) in \(printed.output)")
        }
        let bad = try await run(
            [GatewayUnderTest.executable, "serve", "--simulate", "--print-config"], environment: ["BLEGATEWAY_MAX_CONNECTIONS": "lots"])
        #expect(bad.status == 64)
        #expect(bad.error.contains("--max-connections") && bad.error.contains("BLEGATEWAY_MAX_CONNECTIONS"), "\(bad.error)")
    }

    /// `--state-durability` is full unless asked otherwise, takes normal
    /// from the command line or the environment, and refuses anything else.
    @Test func theStateDurabilityIsFullUnlessAskedOtherwise() async throws {
        let plain = try await run([GatewayUnderTest.executable, "serve", "--simulate", "--print-config"])
        #expect(plain.status == 0 && plain.output.contains("state-durability: full"), "\(plain.output)\(plain.error)")
        let normal = try await run(
            [GatewayUnderTest.executable, "serve", "--simulate", "--print-config"],
            environment: ["BLEGATEWAY_STATE_DURABILITY": "normal"])
        #expect(normal.status == 0 && normal.output.contains("state-durability: normal"), "\(normal.output)\(normal.error)")
        let none = try await run(
            [GatewayUnderTest.executable, "serve", "--simulate", "--no-state", "--state-durability", "normal", "--print-config"])
        #expect(none.output.contains("state-durability: (none: --no-state)"), "\(none.output)\(none.error)")
        let bad = try await run([GatewayUnderTest.executable, "serve", "--simulate", "--state-durability", "sometimes"])
        #expect(bad.status == 64 && bad.error.contains("--state-durability must be full or normal"), "\(bad.error)")
    }

    /// The fleet's timings are options, each checked, and `--print-config`
    /// shows what the bridge runs with.
    @Test func theFleetTimingsAreOptions() async throws {
        let printed = try await run(
            [
                GatewayUnderTest.executable, "serve", "--simulate", "--mqtt", "mqtt://127.0.0.1:1", "--gateway-id", "hall",
                "--mqtt-roam-lost-after", "1.5", "--print-config",
            ],
            environment: ["BLEGATEWAY_MQTT_ROAM_PENALTY": "20", "BLEGATEWAY_MQTT_STREAM_LEASE": "30"])
        #expect(printed.status == 0, "\(printed.error)")
        for line in [
            "gateway-id: hall", "mqtt-roam-margin: 16 dB", "mqtt-roam-lost-after: 1.5 seconds",
            "mqtt-roam-penalty: 20.0 seconds", "mqtt-stream-lease: 30.0 seconds",
        ] {
            #expect(printed.output.contains(line), "\(line) in \(printed.output)")
        }
        for (option, value, message) in [
            ("--mqtt-roam-lost-after", "0.1", "0.5 to 600 seconds"), ("--mqtt-roam-penalty", "4000", "0 to 3600 seconds"),
            ("--mqtt-stream-lease", "1", "3 to 600 seconds"),
        ] {
            let bad = try await run(
                [GatewayUnderTest.executable, "serve", "--simulate", "--mqtt", "mqtt://127.0.0.1:1", option, value, "--print-config"])
            #expect(bad.status == 64 && bad.error.contains(message), "\(option) \(value): \(bad.error)")
        }
    }

    @Test func helpNamesEveryOption() async throws {
        let help = try await run([GatewayUnderTest.executable, "serve", "--help"])
        for option in [
            "--listen", "--adapter", "--api-key", "--cors-origin", "--tls-cert", "--tls-key", "--log-level", "--simulate",
            "--bus", "BLEGATEWAY_API_KEY", "--max-subscriptions-per-client", "BLEGATEWAY_MAX_KEPT_DEVICES",
        ] {
            #expect(help.output.contains(option), "--help lacks \(option)")
        }
        let version = try await run([GatewayUnderTest.executable, "--version"])
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    }
}
