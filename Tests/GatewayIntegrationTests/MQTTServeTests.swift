import Foundation
import Glibc
import Testing
import TestSupport

/// `blegateway serve --mqtt`: the real process, a real mosquitto, and the
/// mosquitto command-line clients a user would try first.
@Suite(.serialized) struct MQTTServeTests {
    static let strap = TestScenario.strap
    static let base = "blegateway/hall"

    @Test func mosquittoClientsSeeEventsAndCommandsReadAndWrite() async throws {
        let broker = try await Broker.start()
        let gateway = try await GatewayUnderTest.start(
            arguments: ["--mqtt", broker.url, "--gateway-id", "hall", "--mqtt-homeassistant", "--mqtt-commands"])
        let base = Self.base
        let everything = try await broker.mosquittoSub("\(base)/#", id: "watcher", format: "%t %p")
        let homeAssistant = try await broker.mosquittoSub("homeassistant/#", id: "home-assistant", format: "%t %p")
        let replies = try await broker.mosquittoSub("blegateway/replies/me", id: "requester", format: "%t %D %P %p")
        #expect(await everything.waitForOutput(containing: "\(base)/status online\n", timeout: .seconds(30)))

        // Scan results.
        _ = try await gateway.request("POST", "/v1/scan", json: #"{"duration_ms":2000}"#)
        #expect(
            await everything.waitForOutput(
                containing: "\(base)/devices/\(Self.strap)/advertisement {\"type\":\"device-", timeout: .seconds(30)))

        func ask(_ command: String, _ json: String, id: String) async throws -> String? {
            try await broker.mosquittoPub([
                "-t", "\(base)/cmd/\(command)", "-q", "1", "-m", json,
                "-D", "publish", "response-topic", "blegateway/replies/me", "-D", "publish", "correlation-data", id,
            ])
            guard await replies.waitForOutput(containing: "blegateway/replies/me \(id) ", timeout: .seconds(30)) else { return nil }
            return replies.standardOutput.split(separator: "\n").first { $0.hasPrefix("blegateway/replies/me \(id) ") }.map(String.init)
        }

        // Connection state.
        let connected = try #require(try await ask("connect", #"{"address":"\#(Self.strap)","timeout_ms":20000}"#, id: "c1"))
        #expect(connected.contains("status:200") && connected.contains("\"connected\":true"), "\(connected)")
        #expect(
            await everything.waitForOutput(
                containing: "\(base)/devices/\(Self.strap)/connection {\"type\":\"device-connected\"", timeout: .seconds(30)))

        // Read and write.
        let read = try #require(try await ask("read", #"{"address":"\#(Self.strap)","characteristic":"2a38"}"#, id: "r1"))
        #expect(read.contains("status:200") && read.contains("\"value\":\"01\""), "\(read)")
        let relay = TestScenario.relay
        let write = try #require(
            try await ask("write", #"{"address":"\#(Self.strap)","characteristic":"\#(relay)","value":"2a"}"#, id: "w1"))
        #expect(write.contains("status:204"), "\(write)")
        let readBack = try #require(try await ask("read", #"{"address":"\#(Self.strap)","characteristic":"\#(relay)"}"#, id: "r2"))
        #expect(readBack.contains("\"value\":\"2a\""), "\(readBack)")

        // Notifications.
        let subscribed = try #require(
            try await ask("subscribe", #"{"address":"\#(Self.strap)","characteristic":"2a37"}"#, id: "s1"))
        #expect(subscribed.contains("{\"subscribed\":true}"), "\(subscribed)")
        #expect(
            await everything.waitForOutput(
                containing: "\(base)/devices/\(Self.strap)/characteristics/00002a37-0000-1000-8000-00805f9b34fb {\"type\":\"characteristic-value\"",
                timeout: .seconds(30)))

        // Home Assistant discovery: the heart rate sensor's config, then its
        // readings as plain numbers (the scenario's 72 ± 6 bpm).
        // (docs/mqtt.md; HomeAssistantDiscoveryTests checks every payload
        // against Home Assistant's own rules).
        let node = "blegateway_hall_c47c8d6a3e01"
        #expect(
            await homeAssistant.waitForOutput(containing: "homeassistant/sensor/\(node)/heart_rate/config {", timeout: .seconds(30)))
        #expect(homeAssistant.standardOutput.contains("\"state_topic\":\"\(base)/devices/\(Self.strap)/sensors/heart_rate\""))
        #expect(homeAssistant.standardOutput.contains("\"topic\":\"\(base)/status\""))
        #expect(await everything.waitForOutput(containing: "\(base)/devices/\(Self.strap)/sensors/heart_rate ", timeout: .seconds(30)))
        let reading = everything.standardOutput.split(separator: "\n")
            .first { $0.hasPrefix("\(base)/devices/\(Self.strap)/sensors/heart_rate ") }?.split(separator: " ").last
        #expect(reading.flatMap { Int($0) }.map { (60...84).contains($0) } == true, "\(reading ?? "")")

        // A problem for a bad command.
        let bad = try #require(try await ask("read", #"{"address":"\#(Self.strap)"}"#, id: "b1"))
        #expect(bad.contains("status:400") && bad.contains("characteristic"), "\(bad)")

        // SIGTERM: the retained status ends `offline`, published by the
        // gateway itself (its clean disconnect discards the Will).
        let exit = await gateway.stop()
        #expect(exit == 0)
        #expect(await everything.waitForOutput(containing: "\(base)/status offline\n", timeout: .seconds(30)))
        everything.kill()
        homeAssistant.kill()
        replies.kill()
    }

    /// Credentials from the environment and a password file (container
    /// secrets); a wrong password is a logged refusal, not a crash.
    @Test func credentialsFromEnvironmentAndPasswordFile() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try await run(["mosquitto_passwd", "-b", "-c", "\(directory)/passwords", "gateway", "s3cret"])
        #expect(made.status == 0, "\(made.error)")
        chmod("\(directory)/passwords", 0o644)
        try "s3cret\n".write(toFile: "\(directory)/secret", atomically: true, encoding: .utf8)
        try "wrong\n".write(toFile: "\(directory)/wrong", atomically: true, encoding: .utf8)
        let broker = try await Broker.start(listenerLines: [
            "allow_anonymous false", "password_file \(directory)/passwords",
        ])

        let good = try await GatewayUnderTest.start(
            arguments: ["--mqtt-password-file", "\(directory)/secret", "--gateway-id", "vault"],
            environment: ["BLEGATEWAY_MQTT": broker.url, "BLEGATEWAY_MQTT_USERNAME": "gateway"])
        let connected = await waitForCondition { good.process.standardError.contains("MQTT: connected to") }
        #expect(connected, "\(good.process.standardError.suffix(2000))")
        #expect(await good.stop() == 0)

        let bad = try await GatewayUnderTest.start(
            arguments: ["--mqtt", "mqtt://gateway@127.0.0.1:\(broker.port)", "--mqtt-password-file", "\(directory)/wrong"])
        let refused = await waitForCondition { bad.process.standardError.contains("MQTT: not connected to") && bad.process.standardError.contains("broker refused") }
        #expect(refused, "\(bad.process.standardError.suffix(2000))")
        // Still serving HTTP.
        #expect(try await bad.get("/health").status == 200)
        #expect(await bad.stop() == 0)
    }

    /// docs/mqtt.md's broker access rules, exactly as printed there: the
    /// gateway and a requester with their own users get commands through;
    /// an anonymous client is refused by the broker, and a user the rules
    /// do not name cannot publish commands.
    @Test func theDocumentedBrokerRulesLockTheCommandDoor() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/mqtt.md").path
        let doc = try String(contentsOfFile: path, encoding: .utf8)
        let acl = try #require(doc.components(separatedBy: "```acl\n").dropFirst().first?.components(separatedBy: "```").first)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (index, user) in ["gateway", "app", "stranger"].enumerated() {
            let made = try await run(
                ["mosquitto_passwd", "-b"] + (index == 0 ? ["-c"] : []) + ["\(directory)/passwords", user, "pw-\(user)"])
            #expect(made.status == 0, "\(made.error)")
        }
        chmod("\(directory)/passwords", 0o644)
        try acl.write(toFile: "\(directory)/acl", atomically: true, encoding: .utf8)
        let broker = try await Broker.start(listenerLines: [
            "allow_anonymous false", "password_file \(directory)/passwords", "acl_file \(directory)/acl",
        ])
        let gateway = try await GatewayUnderTest.start(arguments: [
            "--mqtt", "mqtt://gateway:pw-gateway@127.0.0.1:\(broker.port)", "--gateway-id", "hall", "--mqtt-commands",
        ])
        #expect(await broker.waitForSubscription(client: "blegateway-hall", filter: "blegateway/hall/cmd/+"))
        #expect(!gateway.process.standardError.contains("without credentials"))
        let replies = try await broker.mosquittoSub(
            "blegateway/replies/app/#", id: "app-replies", format: "%t %D %P", arguments: ["-u", "app", "-P", "pw-app"])
        func command(_ user: String?, id: String) async throws {
            let login = user.map { ["-u", $0, "-P", "pw-\($0)"] } ?? []
            _ = try await run(
                ["mosquitto_pub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "mqttv5", "-q", "1"] + login + [
                    "-t", "blegateway/hall/cmd/read", "-m", #"{"address":"\#(Self.strap)","characteristic":"2a38"}"#,
                    "-D", "publish", "response-topic", "blegateway/replies/app/\(id)",
                    "-D", "publish", "correlation-data", id,
                ])
        }
        try await command(nil, id: "anonymous")
        try await command("stranger", id: "stranger")
        try await command("app", id: "app")
        // The app's own command is answered (409: the strap is not connected) ...
        #expect(await replies.waitForOutput(containing: "blegateway/replies/app/app app status:", timeout: .seconds(30)))
        // ... and the two before it never reached the gateway.
        #expect(!replies.standardOutput.contains("anonymous"))
        #expect(!replies.standardOutput.contains("stranger"))
        #expect(broker.log.contains("Denied PUBLISH from") || broker.log.contains("not authorised"), "\(broker.log.suffix(3000))")
        replies.kill()
        #expect(await gateway.stop() == 0)
        await broker.stop()
    }

    @Test func commandsWithoutBrokerCredentialsWarnAtStartup() async throws {
        let broker = try await Broker.start()
        let gateway = try await GatewayUnderTest.start(arguments: ["--mqtt", broker.url, "--mqtt-commands"])
        #expect(await waitForCondition { gateway.process.standardError.contains("MQTT commands are on") })
        #expect(await gateway.stop() == 0)
        let quiet = try await GatewayUnderTest.start(arguments: ["--mqtt", broker.url])
        #expect(await waitForCondition { quiet.process.standardError.contains("MQTT: connected to") })
        #expect(!quiet.process.standardError.contains("MQTT commands are on"))
        #expect(await quiet.stop() == 0)
        await broker.stop()
    }

    /// libmosquitto, and the TLS libraries it links, are opened for
    /// `--mqtt` only: a gateway without it maps none of them (its idle
    /// memory and its start-up, BENCHMARKS.md), one with it works on them.
    @Test func libmosquittoIsLoadedOnlyForMQTT() async throws {
        func mappedLibraries(_ process: ChildProcess) throws -> Set<String> {
            // Read to the end: `String(contentsOfFile:)` reads a /proc file
            // (whose size is 0) once, which gives its first page only, and
            // where a library lands in the maps changes from run to run.
            let fd = open("/proc/\(process.pid)/maps", O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0, "cannot open the gateway's maps: errno \(errno)")
            defer { close(fd) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while case let count = read(fd, &chunk, chunk.count), count > 0 { bytes += chunk[..<count] }
            let maps = String(decoding: bytes, as: UTF8.self)
            return Set(maps.split(separator: "\n").compactMap { line in
                line.split(separator: "/").last.flatMap { name in
                    ["libmosquitto", "libssl", "libcrypto"].first { name.hasPrefix("\($0).so") }
                }
            })
        }
        let plain = try await GatewayUnderTest.start()
        _ = try await plain.get("/health")
        let unmapped = try mappedLibraries(plain.process)
        #expect(unmapped == [], "\(unmapped)")
        #expect(await plain.stop() == 0)

        let broker = try await Broker.start()
        let bridged = try await GatewayUnderTest.start(arguments: ["--mqtt", broker.url])
        #expect(await waitForCondition { bridged.process.standardError.contains("MQTT: connected to") })
        let mapped = try mappedLibraries(bridged.process)
        #expect(mapped == ["libmosquitto", "libssl", "libcrypto"], "\(mapped)")
        #expect(await bridged.stop() == 0)
        await broker.stop()
    }

    @Test func startupRefusesABadGatewayIDAndBrokerURL() async throws {
        for arguments in [
            ["--mqtt", "mqtt://127.0.0.1:1", "--gateway-id", "a/b"],
            ["--mqtt", "mqtt://127.0.0.1:1", "--gateway-id", "any"],
            ["--mqtt", "http://127.0.0.1:1"],
            ["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-qos", "2"],
            ["--mqtt", "mqtt://127.0.0.1:1", "--mqtt-cert", "/nonexistent"],
        ] {
            let process = try ChildProcess([GatewayUnderTest.executable, "serve", "--simulate"] + arguments)
            let status = await process.wait(timeout: .seconds(30))
            process.kill()
            #expect(status != nil && status != 0, "\(arguments) started")
            #expect(process.standardError.contains("--m") || process.standardError.contains("--gateway-id"), "\(process.standardError)")
        }
    }
}
