import BlueZ
import Foundation
import MQTT
import MQTTBridge
import Synchronization
import TestSupport
import Testing

/// The MQTT command door: off unless enabled, locked by the API key,
/// answers only under the reply prefix, payloads bounded, and a burst
/// bounded by the command gate (each checked against a real mosquitto).
@Suite(.serialized) struct CommandDoorTests {
    static let strap = "C4:7C:8D:6A:3E:01"
    static let read = #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a38"}"#

    /// Publishes `payload` to `cmd/<command>` with a response topic under
    /// the reply prefix and `properties`; returns the requester's inbox.
    private func requester(_ world: World, topic: String = "blegateway/replies/t") async throws -> (Client, Inbox) {
        // The bridge subscribes in the background: commands published before
        // its subscription is in place would go nowhere.
        if world.bridge.configuration.commands {
            #expect(await world.broker.waitForSubscription(client: "blegateway-hall", filter: "blegateway/hall/cmd/+"))
        }
        let client = try world.broker.client("requester-\(UInt32.random(in: 0...UInt32.max))")
        let inbox = Inbox()
        _ = try await client.subscribe(topic, qos: .atLeastOnce, handler: inbox.handler)
        return (client, inbox)
    }

    private func status(_ message: Message?) -> String? {
        message?.properties.userProperties.first { $0.name == "status" }?.value
    }

    @Test func commandsAreOffUnlessEnabled() async throws {
        let world = try await World.start { $0.commands = false }
        let (client, inbox) = try await requester(world)
        try client.publish(
            "blegateway/hall/cmd/read", payload: bytes(Self.read), qos: .atLeastOnce,
            properties: MessageProperties(responseTopic: "blegateway/replies/t"))
        // The requester's own marker, published after the command, arrives
        // first and alone: the gateway never subscribed to its commands.
        try client.publish("blegateway/replies/t", payload: bytes("marker"), qos: .atLeastOnce)
        let received = await inbox.wait(for: 1)
        #expect(received.map(\.payloadText) == ["marker"])
        #expect(!world.broker.log.contains("blegateway/hall/cmd/+"))
        await client.stop()
        await world.shutdown()
    }

    @Test func withAnAPIKeyACommandMustCarryIt() async throws {
        let world = try await World.start(apiKey: "s3cret")
        let (client, inbox) = try await requester(world)
        for (index, key) in [nil, "wrong", "s3cret"].enumerated() {
            try client.publish(
                "blegateway/hall/cmd/connect", payload: bytes(#"{"address":"C4:7C:8D:6A:3E:01","timeout_ms":20000}"#),
                qos: .atLeastOnce,
                properties: MessageProperties(
                    responseTopic: "blegateway/replies/t", correlationData: bytes("k\(index)"),
                    userProperties: key.map { [UserProperty("api-key", $0)] } ?? []))
        }
        let replies = await inbox.wait(for: 3, timeout: .seconds(60))
        func reply(_ id: String) -> Message? { replies.first { $0.properties.correlationData == bytes(id) } }
        #expect(status(reply("k0")) == "401")
        #expect(reply("k0")?.payloadText.contains("urn:blegateway:problem:unauthorized") == true)
        #expect(status(reply("k1")) == "401")
        #expect(status(reply("k2")) == "200", "\(reply("k2")?.payloadText ?? "no answer")")
        await client.stop()
        await world.shutdown()
    }

    @Test func answersGoOnlyUnderTheReplyPrefix() async throws {
        let world = try await World.start()
        let (client, inbox) = try await requester(world, topic: "#")
        for (index, topic) in ["elsewhere/me", "blegateway/hall/cmd/connect", "blegateway/replies/"].enumerated() {
            try client.publish(
                "blegateway/hall/cmd/read", payload: bytes(Self.read), qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: topic, correlationData: bytes("t\(index)")))
        }
        // Each refusal goes to the gateway's own responses topic, as for a
        // request that names none.
        let refusals = await waitForReplies(inbox, on: "blegateway/hall/responses/read", count: 3)
        #expect(refusals.count == 3)
        #expect(refusals.allSatisfy { status($0) == "400" && $0.payloadText.contains("blegateway/replies/") })
        #expect(!inbox.all.contains { $0.topic == "elsewhere/me" })
        #expect(!inbox.all.contains { $0.topic == "blegateway/hall/cmd/connect" })
        await client.stop()
        await world.shutdown()
    }

    @Test func payloadsOverTheLimitAreRefusedUnread() async throws {
        let world = try await World.start { $0.commandPayloadLimit = 1024 }
        let (client, inbox) = try await requester(world)
        func padded(_ count: Int) -> [UInt8] {
            bytes(#"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a38","pad":""# + String(repeating: "x", count: count) + "\"}")
        }
        // A little over the limit: answered 413. Far over it (more than
        // twice): the broker drops it, as the gateway asked in CONNECT, and
        // it never reaches the gateway's memory. The gateway goes on.
        for (id, payload) in [("big", padded(1200)), ("huge", padded(100_000)), ("fine", bytes(Self.read))] {
            try client.publish(
                "blegateway/hall/cmd/read", payload: payload, qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: "blegateway/replies/t", correlationData: bytes(id)))
        }
        let replies = await inbox.wait(for: 2)
        #expect(replies.count == 2)
        let big = replies.first { $0.properties.correlationData == bytes("big") }
        #expect(status(big) == "413")
        #expect(big?.payloadText.contains("urn:blegateway:problem:payload-too-large") == true)
        let fine = replies.first { $0.properties.correlationData == bytes("fine") }
        // Unknown (never scanned) or not connected: answered as before.
        #expect(["404", "409"].contains(status(fine)), "\(fine?.payloadText ?? "no answer")")
        await client.stop()
        await world.shutdown()
    }

    @Test func aTimeoutThatIsNotAWholeNumberIsRefused() async throws {
        let world = try await World.start()
        let (client, inbox) = try await requester(world)
        for (index, timeout) in [#""500""#, "1.5", "true", "-3"].enumerated() {
            try client.publish(
                "blegateway/hall/cmd/connect",
                payload: bytes(#"{"address":"C4:7C:8D:6A:3E:01","timeout_ms":"# + timeout + "}"), qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: "blegateway/replies/t", correlationData: bytes("t\(index)")))
        }
        let replies = await inbox.wait(for: 4)
        #expect(replies.count == 4)
        #expect(replies.allSatisfy { status($0) == "400" && $0.payloadText.contains("timeout_ms") })
        await client.stop()
        await world.shutdown()
    }

    /// What a payload names is read as the REST route reads it: a mistake
    /// there is the route's own problem, naming the input, for the route's
    /// path (`instance`), as an HTTP client would get it.
    @Test func aCommandsValuesAreCheckedAsTheRouteChecksThem() async throws {
        let world = try await World.start()
        let (client, inbox) = try await requester(world)
        let device = "/v1/devices/\(Self.strap)"
        let cases: [(command: String, payload: String, status: String, expected: [String])] = [
            (
                "connect", #"{"address":"C4:7C:8D:6A:3E:01","timeout_ms":120001}"#, "400",
                [
                    #""detail":"timeout_ms: must be an integer from 1 to 120000, not '120001'""#,
                    #""instance":"\#(device)/connect""#,
                ]
            ),
            (
                "read", #"{"address":"not an address","characteristic":"2a38"}"#, "400",
                [
                    #""invalid_params":[{"name":"address","#,
                    #""instance":"/v1/devices/not%20an%20address/characteristics/2a38/value""#,
                ]
            ),
            (
                "write", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a39","value":"01","type":"fast"}"#, "400",
                [
                    #""detail":"type: must be request, command or reliable, not 'fast'""#,
                    #""instance":"\#(device)/characteristics/2a39/value""#,
                ]
            ),
            (
                "read", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a38","pair":"always"}"#, "400",
                [
                    #""detail":"pair: 'always' is not a pairing mode (auto)""#,
                    #""instance":"\#(device)/characteristics/2a38/value""#,
                ]
            ),
            (
                "keep-status", #"{"address":"C4:7C:8D:6A:3E:01","adapter":"wlan0"}"#, "400",
                [#""invalid_params":[{"name":"adapter","#, #""instance":"\#(device)/keep""#]
            ),
            (
                "keep-status", #"{"address":"C4:7C:8D:6A:3E:01"}"#, "404",
                [#""detail":"C4:7C:8D:6A:3E:01 on hci0 is not kept connected""#, #""instance":"\#(device)/keep""#]
            ),
        ]
        for (index, item) in cases.enumerated() {
            try client.publish(
                "blegateway/hall/cmd/\(item.command)", payload: bytes(item.payload), qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: "blegateway/replies/t", correlationData: bytes("v\(index)")))
        }
        let replies = await inbox.wait(for: cases.count, timeout: .seconds(60))
        for (index, item) in cases.enumerated() {
            let reply = replies.first { $0.properties.correlationData == bytes("v\(index)") }
            #expect(status(reply) == item.status, "\(item.command): \(reply?.payloadText ?? "no answer")")
            #expect(reply?.properties.contentType == "application/problem+json")
            for expected in item.expected {
                #expect(reply?.payloadText.contains(expected) == true, "\(item.command): \(reply?.payloadText ?? "no answer")")
            }
        }
        await client.stop()
        await world.shutdown()
    }

    @Test func aBurstBeyondTheGateIsRefusedAtOnceAndEveryCommandAnswered() async throws {
        let world = try await World.start {
            $0.commandConcurrency = 4
            $0.commandQueueLength = 16
        }
        let (client, inbox) = try await requester(world)
        // Connects to absent devices: each one scans for its device until
        // its timeout, the slowest kind of command there is.
        let burst = 400
        for index in 0..<burst {
            let address = String(format: "00:00:00:00:%02X:%02X", index / 256, index % 256)
            try client.publish(
                "blegateway/hall/cmd/connect", payload: bytes(#"{"address":"\#(address)","timeout_ms":300}"#),
                qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: "blegateway/replies/t", correlationData: bytes("b\(index)")))
        }
        let replies = await inbox.wait(for: burst, timeout: .seconds(120))
        #expect(replies.count == burst)
        let statuses = Dictionary(grouping: replies, by: { status($0) ?? "none" }).mapValues(\.count)
        // At most 4 running and 16 waiting: the rest refused at once.
        #expect((statuses["503"] ?? 0) >= burst / 2, "\(statuses)")
        #expect(Set(statuses.keys).isSubset(of: ["503", "504", "404"]), "\(statuses)")
        let refused = replies.first { status($0) == "503" }
        #expect(refused?.properties.userProperties.contains { $0.name == "retry-after" } == true)
        // And the gateway is as responsive as before.
        #expect(await waitForCondition { world.bridge.commandQueueDepth == 0 })
        _ = try await world.central.connect(try #require(BluetoothAddress(Self.strap)), timeout: .seconds(20))
        await client.stop()
        await world.shutdown()
    }

    private func waitForReplies(_ inbox: Inbox, on topic: String, count: Int) async -> [Message] {
        await waitForCondition { inbox.all.filter { $0.topic == topic }.count >= count }
        return inbox.all.filter { $0.topic == topic }
    }
}
