import BlueZ
import BlueZSimulator
import DBus
import Foundation
import GatewayAPI
import MQTT
import MQTTBridge
import Synchronization
import TestSupport
import Testing

/// The bridge between a gateway (over the simulator on a private bus) and a
/// real mosquitto, checked with mosquitto_sub / mosquitto_pub and the MQTT
/// client.
@Suite(.serialized) struct BridgeTests {
    static let strap = "C4:7C:8D:6A:3E:01"

    @Test func publishesEventsAndAnswersCommands() async throws {
        let world = try await World.start()
        let base = "blegateway/hall"
        let everything = try await world.broker.mosquittoSub("\(base)/#", id: "watcher", format: "%t %r %p")
        // Retained (1) if it was published before mosquitto_sub subscribed, else live (0).
        #expect(
            await waitForCondition {
                everything.standardOutput.contains("\(base)/status 1 online\n")
                    || everything.standardOutput.contains("\(base)/status 0 online\n")
            })
        #expect(world.broker.log.contains("\t\(base)/status"))  // the Will's topic

        // Scan results, throttled per device.
        let session = try await world.central.scan(filter: DiscoveryFilter())
        #expect(await everything.waitForOutput(containing: "\(base)/devices/\(Self.strap)/advertisement 0 {\"type\":\"device-"))
        withExtendedLifetime(session) {}

        // Commands, request/response with the library as the requester.
        let requester = try world.broker.client("requester")
        let replies = Inbox()
        _ = try await requester.subscribe("blegateway/replies/#", handler: replies.handler)
        var correlation = 0
        func ask(_ command: String, _ json: String) async throws -> MQTT.Message {
            correlation += 1
            let id = bytes("req-\(correlation)")
            try requester.publish(
                "\(base)/cmd/\(command)", payload: bytes(json), qos: .atLeastOnce,
                properties: MessageProperties(responseTopic: "blegateway/replies/\(correlation)", correlationData: id))
            let reply = try #require(
                await replies.wait(for: correlation).first { $0.topic == "blegateway/replies/\(correlation)" })
            #expect(reply.properties.correlationData == id)
            return reply
        }
        func status(_ reply: MQTT.Message) -> String? { reply.properties.userProperties.first { $0.name == "status" }?.value }

        let connected = try await ask("connect", #"{"address":"c4-7c-8d-6a-3e-01","timeout_ms":20000}"#)
        #expect(status(connected) == "200", "\(connected.payloadText)")
        #expect(connected.properties.contentType == "application/json")
        #expect(connected.payloadText.contains("\"connected\":true"))
        #expect(await everything.waitForOutput(containing: "\(base)/devices/\(Self.strap)/connection 0 {\"type\":\"device-connected\""))

        let read = try await ask("read", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a38"}"#)
        #expect(status(read) == "200" && read.payloadText.contains("\"value\":\"01\""), "\(read.payloadText)")

        let written = try await ask("write", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a39","value":"01"}"#)
        #expect(status(written) == "204", "\(written.payloadText)")

        let refused = try await ask("write", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a39","value":"02"}"#)
        #expect(status(refused) == "502" && refused.properties.contentType == "application/problem+json")
        #expect(refused.payloadText.contains("\"att_error\":128"), "\(refused.payloadText)")

        let subscribed = try await ask("subscribe", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a37"}"#)
        #expect(status(subscribed) == "200", "\(subscribed.payloadText)")
        #expect(
            await everything.waitForOutput(
                containing: "\(base)/devices/\(Self.strap)/characteristics/00002a37-0000-1000-8000-00805f9b34fb 0 {\"type\":\"characteristic-value\""))

        let unknown = try await ask("read", #"{"address":"00:11:22:33:44:55","characteristic":"2a19"}"#)
        #expect(status(unknown) == "404" && unknown.payloadText.contains("\"type\":\"urn:blegateway:problem:not-found\""))
        let malformed = try await ask("read", #"{"characteristic":"2a19"}"#)
        #expect(status(malformed) == "400" && malformed.payloadText.contains("\"instance\":\"\(base)/cmd/read\""))
        let nonsense = try await ask("launch", "{}")
        #expect(status(nonsense) == "404")

        let disconnected = try await ask("disconnect", #"{"address":"C4:7C:8D:6A:3E:01"}"#)
        #expect(status(disconnected) == "200", "\(disconnected.payloadText)")
        #expect(await everything.waitForOutput(containing: "\(base)/devices/\(Self.strap)/connection 0 {\"type\":\"device-disconnected\""))
        await requester.stop()

        // mosquitto_pub as the requester, mosquitto_sub as the listener.
        let answers = try await world.broker.mosquittoSub("blegateway/replies/cli", id: "cli", format: "%D %P %p")
        try await world.broker.mosquittoPub([
            "-t", "\(base)/cmd/read", "-m", #"{"address":"C4:7C:8D:6A:3E:01","characteristic":"2a38"}"#,
            "-D", "publish", "response-topic", "blegateway/replies/cli", "-D", "publish", "correlation-data", "x1",
        ])
        #expect(await answers.waitForOutput(containing: "x1 status:409 gateway:hall {\"type\":\"urn:blegateway:problem:not-connected\""))

        await world.bridge.stop()
        #expect(await everything.waitForOutput(containing: "\(base)/status 0 offline\n"))
        // Retained: what a subscriber arriving later sees first.
        for (topic, expected) in [
            ("\(base)/status", "1 offline"), ("\(base)/devices/\(Self.strap)/connection", "1 {\"type\":\"device-disconnected\""),
        ] {
            let later = try ChildProcess([
                "mosquitto_sub", "-h", "127.0.0.1", "-p", "\(world.broker.port)", "-t", topic, "-C", "1", "-F", "%r %p",
            ])
            #expect(await later.wait(timeout: .seconds(30)) == 0)
            #expect(later.standardOutput.hasPrefix(expected), "\(later.standardOutput)")
        }
        await world.shutdown()
    }

    /// The keep commands, the retained keep topic the fleet's merged view
    /// reads, and a command sent through the bridge as `FleetAccess` (the
    /// only gateway of its fleet takes it itself).
    @Test func keepCommandsAndTheKeepTopicAndAFleetCommand() async throws {
        let world = try await World.start()
        let base = "blegateway/hall"
        let keepTopic = "\(base)/devices/\(Self.strap)/keep"
        let watcher = try await world.broker.mosquittoSub(keepTopic, id: "keep-watcher", format: "%t %r [%p]")
        #expect(await world.broker.waitForSubscription(client: "keep-watcher", filter: keepTopic))
        #expect(await world.bridge.client.waitUntilConnected(timeout: .seconds(30)))
        let address = #"{"address":"\#(Self.strap)"}"#

        func send(_ name: String, _ json: String) async throws -> FleetAnswer {
            try await world.bridge.send(FleetCommand(name: name, payload: bytes(json)), timeout: .seconds(30))
        }
        let kept = try await send("keep", #"{"address":"\#(Self.strap)","label":"strap"}"#)
        #expect(kept.gateway == "hall" && kept.status == 201, "\(String(decoding: kept.body, as: UTF8.self))")
        #expect(
            await watcher.waitForOutput(containing: "\(keepTopic) 0 [{\"gateway\":\"hall\",\"address\":\"\(Self.strap)\",\"adapter\":\"hci0\""),
            "\(watcher.standardOutput)")
        let status = try await send("keep-status", address)
        #expect(status.status == 200 && String(decoding: status.body, as: UTF8.self).contains("\"label\":\"strap\""))
        #expect(await waitForCondition { world.bridge.devices().first { $0.address == Self.strap }?.keptBy.map(\.gateway) == ["hall"] })
        #expect(await waitForCondition { world.bridge.gateways().map(\.id) == ["hall"] })
        let released = try await send("unkeep", address)
        #expect(released.status == 204)
        #expect(await watcher.waitForOutput(containing: "\(keepTopic) 0 []"), "\(watcher.standardOutput)")
        let again = try await send("unkeep", address)
        #expect(again.status == 404 && again.contentType == "application/problem+json")
        watcher.kill()
        await world.shutdown()
    }

    @Test func advertisementsArePublishedAtMostOncePerIntervalPerDevice() async throws {
        let world = try await World.start(advertisementInterval: .seconds(3600))
        let topic = "blegateway/hall/devices/\(Self.strap)/advertisement"
        let inbox = Inbox()
        let watcher = try world.broker.client("adv-watcher")
        _ = try await watcher.subscribe(topic, handler: inbox.handler)
        let session = try await world.central.scan(filter: DiscoveryFilter())
        _ = await inbox.wait(for: 1)
        // The strap advertises every 10 ms at this timing: wait until the
        // gateway has seen it many more times, then check nothing more came.
        let seen = Mutex(0)
        let events = world.central.events()
        let counter = Task {
            for await event in events {
                if case .deviceUpdated(let device) = event, device.address.description == Self.strap {
                    seen.withLock { $0 += 1 }
                }
            }
        }
        #expect(await waitForCondition { seen.withLock { $0 } >= 5 })
        counter.cancel()
        try watcher.publish(topic, payload: bytes("marker"))
        let received = await inbox.wait(for: 2)
        #expect(received.map(\.payloadText).last == "marker")
        #expect(received.count == 2)
        withExtendedLifetime(session) {}
        await watcher.stop()
        await world.shutdown()
    }
}

/// A broker, the simulator on a private bus, a central and a gateway, and a
/// started bridge for gateway id `hall`.
final class World: Sendable {
    let broker: Broker
    let bus: TestBus
    let simulatorConnection: Connection
    let simulator: SimulatedBlueZ
    let connection: Connection
    let central: Central
    let gateway: Gateway
    let bridge: Bridge

    private init(
        broker: Broker, bus: TestBus, simulatorConnection: Connection, simulator: SimulatedBlueZ,
        connection: Connection, central: Central, gateway: Gateway, bridge: Bridge
    ) {
        self.broker = broker
        self.bus = bus
        self.simulatorConnection = simulatorConnection
        self.simulator = simulator
        self.connection = connection
        self.central = central
        self.gateway = gateway
        self.bridge = bridge
    }

    static func start(
        advertisementInterval: Duration = .milliseconds(200), apiKey: String? = nil,
        configure: (inout BridgeConfiguration) -> Void = { _ in }
    ) async throws -> World {
        var configuration = BridgeConfiguration(gatewayID: "hall", advertisementInterval: advertisementInterval)
        configuration.commands = true
        configure(&configuration)
        let broker = try await Broker.start()
        let bus = try TestBus()
        let simulatorConnection = try await bus.connect()
        var scenario = Scenario.default
        scenario.timing = 0.02
        let simulator = try await SimulatedBlueZ.start(
            on: simulatorConnection, scenario: scenario, options: SimulatorOptions(temporaryTimeout: 300))
        let connection = try await bus.connect()
        let central = Central(connection: connection)
        try await central.start()
        let gateway = Gateway(central: central, configuration: GatewayConfiguration(apiKey: apiKey))
        let bridge = try Bridge(
            gateway: gateway,
            mqtt: MQTT.Configuration(broker: try BrokerURL(parsing: broker.url), clientID: ""),
            configuration: configuration)
        try await bridge.start()
        return World(
            broker: broker, bus: bus, simulatorConnection: simulatorConnection, simulator: simulator,
            connection: connection, central: central, gateway: gateway, bridge: bridge)
    }

    func shutdown() async {
        await bridge.stop()
        await central.stop()
        connection.close()
        await simulator.stop()
        simulatorConnection.close()
    }
}
