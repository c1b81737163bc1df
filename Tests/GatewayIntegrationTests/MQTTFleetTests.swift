import Foundation
import Glibc
import Testing
import TestSupport

/// Three `blegateway serve --mqtt` processes, each over its own simulator
/// that hears the same device at a different strength, on one mosquitto:
/// commands to `blegateway/any/cmd/…` go to exactly one of them.
@Suite(.serialized) struct MQTTFleetTests {
    static let device = "C4:7C:8D:6A:3E:01"

    /// The device heard at `rssi`; a connect takes `delay` seconds, long
    /// enough to kill a gateway in the middle of one.
    static func scenario(adapter: Int, rssi: Int, delay: Double) -> String {
        """
        timing: 1
        adapters:
          - id: hci0
            address: "00:1A:7D:DA:71:1\(adapter)"
        devices:
          - address: "\(device)"
            name: Fleet strap
            rssi: \(rssi)
            advertising:
              interval: 0.1
              uuids: ["180f"]
            connection:
              delay: \(delay)
              resolveDelay: 0.1
            services:
              - uuid: "180f"
                characteristics:
                  - uuid: "2a19"
                    flags: [read, notify]
                    value: "5\(adapter)"
        """
    }

    @Test func aCommandToAnyIsTakenByOneGatewayAndSurvivesItsDeath() async throws {
        let broker = try await Broker.start()
        let watcher = try await broker.mosquittoSub("blegateway/#", id: "watcher", format: "%t %p")
        let replies = try await broker.mosquittoSub("blegateway/replies/fleet", id: "requester", format: "%D %P %p")
        var gateways: [String: GatewayUnderTest] = [:]
        var scans: [EventStreamClient] = []
        for (index, (id, rssi)) in [("g-a", -50), ("g-b", -65), ("g-c", -80)].enumerated() {
            let gateway = try await GatewayUnderTest.start(
                scenario: Self.scenario(adapter: index, rssi: rssi, delay: 3),
                arguments: ["--mqtt", broker.url, "--gateway-id", id, "--mqtt-keepalive", "5", "--mqtt-commands"])
            gateways[id] = gateway
            scans.append(try gateway.stream("/v1/scan"))
        }
        func stopAll() async {
            for scan in scans { scan.close() }
            for gateway in gateways.values { await gateway.stop() }
            watcher.kill()
            replies.kill()
        }
        for id in ["g-a", "g-b", "g-c"] {
            #expect(
                await watcher.waitForOutput(
                    containing: "blegateway/\(id)/devices/\(Self.device)/presence {\"gateway\":\"\(id)\"",
                    timeout: .seconds(60)),
                "no presence from \(id)")
        }

        func ask(_ command: String, _ json: String, id: String, wait: Bool = true) async throws -> String? {
            try await broker.mosquittoPub([
                "-t", "blegateway/any/cmd/\(command)", "-q", "1", "-m", json,
                "-D", "publish", "response-topic", "blegateway/replies/fleet", "-D", "publish", "correlation-data", id,
            ])
            guard wait, await replies.waitForOutput(containing: "\(id) ", timeout: .seconds(60)) else { return nil }
            return replies.standardOutput.split(separator: "\n").first { $0.hasPrefix("\(id) ") }.map(String.init)
        }
        let address = #"{"address":"\#(Self.device)","timeout_ms":30000}"#

        // The best hearer connects; the holder of the connection reads.
        let connect = try #require(try await ask("connect", address, id: "c1"))
        #expect(connect.contains("status:200") && connect.contains("gateway:g-a"), "\(connect)")
        let read = try #require(
            try await ask("read", #"{"address":"\#(Self.device)","characteristic":"2a19"}"#, id: "r1"))
        #expect(read.contains("status:200") && read.contains("gateway:g-a") && read.contains("\"value\":\"50\""), "\(read)")
        let disconnect = try #require(try await ask("disconnect", address, id: "d1"))
        #expect(disconnect.contains("gateway:g-a"), "\(disconnect)")
        #expect(
            await watcher.waitForOutput(
                containing: "blegateway/g-a/devices/\(Self.device)/connection {\"type\":\"device-disconnected\"",
                timeout: .seconds(30)))

        // Killed in the middle of a connect: its Last Will reopens the
        // command, and the next best takes it.
        _ = try await ask("connect", address, id: "c2", wait: false)
        #expect(
            await watcher.waitForOutput(
                containing: "blegateway/any/claims/\(Self.device) {\"request\":", timeout: .seconds(30)))
        let claim = watcher.standardOutput.split(separator: "\n").last { $0.contains("/any/claims/") && !$0.contains("done") }
        #expect(claim?.contains("\"gateway\":\"g-a\"") == true, "\(claim ?? "")")
        gateways["g-a"]?.process.kill()
        let taken = try #require(
            await replies.waitForOutput(containing: "c2 ", timeout: .seconds(90))
                ? replies.standardOutput.split(separator: "\n").first { $0.hasPrefix("c2 ") } : nil,
            "no answer after the owner died:\n\(watcher.standardOutput.suffix(3000))")
        #expect(taken.contains("status:200") && taken.contains("gateway:g-b"), "\(taken)")
        #expect(watcher.standardOutput.contains("blegateway/g-a/status offline"))

        // Never two connects: one device-connected from g-a (c1), one from g-b
        // (c2), none from g-c; one answer to each request.
        let lines = watcher.standardOutput.split(separator: "\n")
        func connects(_ id: String) -> Int {
            lines.filter { $0.hasPrefix("blegateway/\(id)/devices/\(Self.device)/connection {\"type\":\"device-connected\"") }.count
        }
        #expect(connects("g-a") == 1)
        #expect(connects("g-b") == 1)
        #expect(connects("g-c") == 0)
        let answers = replies.standardOutput.split(separator: "\n").map { $0.prefix { $0 != " " } }
        #expect(answers.sorted() == ["c1", "c2", "d1", "r1"], "\(replies.standardOutput)")
        await stopAll()
    }
}
