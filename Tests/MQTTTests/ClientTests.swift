import Foundation
import Glibc
import MQTT
import Synchronization
import TestSupport
import Testing

/// The client against a real mosquitto, checked with the library itself and
/// with mosquitto_sub / mosquitto_pub as independent clients.
@Suite(.serialized) struct ClientTests {
    @Test(arguments: [QoS.atMostOnce, .atLeastOnce])
    func publishAndSubscribeRoundTrip(qos: QoS) async throws {
        let broker = try await Broker.start()
        let subscriber = try broker.client("round-sub")
        let publisher = try broker.client("round-pub")
        #expect(await subscriber.waitUntilConnected(timeout: .seconds(30)))
        #expect(await publisher.waitUntilConnected(timeout: .seconds(30)))
        let inbox = Inbox()
        _ = try await subscriber.subscribe("room/+/temp", qos: qos, handler: inbox.handler)
        let independent = try await broker.mosquittoSub("room/#", id: "independent-sub")

        for index in 0..<20 {
            #expect(try publisher.publish("room/\(index)/temp", payload: bytes("\(index)"), qos: qos) == .sent)
        }
        let received = await inbox.wait(for: 20)
        #expect(received.map(\.payloadText) == (0..<20).map(String.init))
        #expect(received.allSatisfy { $0.qos == qos && !$0.retain })
        #expect(received.first?.topic == "room/0/temp")
        #expect(await independent.waitForOutput(containing: "room/19/temp 19\n"))

        try await broker.mosquittoPub(["-t", "room/kitchen/temp", "-m", "from mosquitto_pub", "-q", "\(qos.rawValue)"])
        #expect(await inbox.wait(for: 21).last?.payloadText == "from mosquitto_pub")
        if qos == .atLeastOnce {
            #expect(await publisher.waitUntilDelivered(timeout: .seconds(30)))
            #expect(publisher.statistics.acknowledged == 20)
        }
        #expect(publisher.statistics.published == 20)
        await subscriber.stop()
        await publisher.stop()
        #expect(subscriber.connectionState == .stopped)
        #expect(throws: MQTTError.self) { try publisher.publish("room/1/temp", payload: [], qos: qos) }
    }

    /// A gateway with a thousand streams open gives its MQTT connection a
    /// descriptor numbered past 1023, which select-based waiting refuses.
    @Test func aClientWorksWhenItsDescriptorsAreNumberedPast1023() async throws {
        let broker = try await Broker.start()
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        while held.count < 1_100 {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { break }
            held.append(descriptor)
        }
        try #require((held.last ?? 0) >= 1_024, "could not open descriptors past 1023")
        let client = try broker.client("many-descriptors")
        #expect(await client.waitUntilConnected(timeout: .seconds(30)))
        let inbox = Inbox()
        _ = try await client.subscribe("many/#", handler: inbox.handler)
        for index in 0..<20 {
            #expect(try client.publish("many/\(index)", payload: bytes("\(index)"), qos: .atLeastOnce) == .sent)
        }
        #expect(await inbox.wait(for: 20).map(\.payloadText) == (0..<20).map(String.init))
        #expect(await client.waitUntilDelivered(timeout: .seconds(30)))
        await client.stop()
    }

    /// The broker sends a message once per subscription of the client it
    /// matches; each handler still gets it once, whatever the others.
    @Test func overlappingSubscriptionsGiveEachHandlerAMessageOnce() async throws {
        let broker = try await Broker.start()
        let client = try broker.client("overlap")
        #expect(await client.waitUntilConnected(timeout: .seconds(30)))
        let (wildcard, exact, sameFilter, everything) = (Inbox(), Inbox(), Inbox(), Inbox())
        _ = try await client.subscribe("ovl/+/c", handler: wildcard.handler)
        _ = try await client.subscribe("ovl/b/c", handler: exact.handler)
        _ = try await client.subscribe("ovl/b/c", handler: sameFilter.handler)
        _ = try await client.subscribe("ovl/#", handler: everything.handler)
        for (topic, text) in [("ovl/b/c", "1"), ("ovl/x/c", "2"), ("ovl/b/c", "3")] {
            try client.publish(topic, payload: bytes(text), qos: .atLeastOnce)
        }
        #expect(await client.waitUntilDelivered(timeout: .seconds(30)))
        _ = await everything.wait(for: 3)
        _ = await exact.wait(for: 2)
        // Long enough for copies that would follow.
        try await Task.sleep(for: .milliseconds(500))
        #expect(wildcard.all.map(\.payloadText) == ["1", "2", "3"])
        #expect(exact.all.map(\.payloadText) == ["1", "3"])
        #expect(sameFilter.all.map(\.payloadText) == ["1", "3"])
        #expect(everything.all.map(\.payloadText) == ["1", "2", "3"])
        await client.stop()
    }

    @Test func retainedMessagesReachLaterSubscribers() async throws {
        let broker = try await Broker.start()
        let publisher = try broker.client("retain-pub")
        #expect(await publisher.waitUntilConnected(timeout: .seconds(30)))
        try publisher.publish("gw/status", payload: bytes("online"), qos: .atLeastOnce, retain: true)
        #expect(await publisher.waitUntilDelivered(timeout: .seconds(30)))

        let independent = try ChildProcess(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "gw/status", "-C", "1", "-F", "%r %t %p"])
        #expect(await independent.wait(timeout: .seconds(30)) == 0)
        #expect(independent.standardOutput == "1 gw/status online\n")

        let later = try broker.client("retain-sub")
        let inbox = Inbox()
        _ = try await later.subscribe("gw/#", handler: inbox.handler)
        let received = await inbox.wait(for: 1)
        #expect(received.first?.retain == true && received.first?.payloadText == "online")
        await later.stop()
        await publisher.stop()
    }

    @Test func lastWillIsPublishedWhenTheProcessIsKilledAndNotAfterACleanStop() async throws {
        let broker = try await Broker.start()
        let watcher = try broker.client("will-watcher")
        let inbox = Inbox()
        _ = try await watcher.subscribe("gw/+/status", handler: inbox.handler)

        let killed = try ChildProcess([probeExecutable, "will", broker.url, "probe-killed", "gw/killed/status", "gone"])
        #expect(await killed.waitForOutput(containing: "connected\n", timeout: .seconds(60)))
        killed.kill()
        let afterKill = await inbox.wait(for: 1)
        #expect(afterKill.map(\.topic) == ["gw/killed/status"])
        #expect(afterKill.first?.payloadText == "gone")

        let stopped = try ChildProcess([probeExecutable, "will", broker.url, "probe-stopped", "gw/stopped/status", "gone"])
        #expect(await stopped.waitForOutput(containing: "connected\n", timeout: .seconds(60)))
        stopped.write("stop\n")
        #expect(await stopped.wait(timeout: .seconds(30)) == 0)
        #expect(stopped.standardOutput.contains("stopped"))
        // The broker has handled the DISCONNECT before it handles this later
        // publish, so a Will would arrive before the marker.
        try await broker.mosquittoPub(["-t", "gw/marker/status", "-m", "marker", "-q", "1"])
        let afterStop = await inbox.wait(for: 2)
        #expect(afterStop.dropFirst().map(\.payloadText) == ["marker"])
        await watcher.stop()
    }

    @Test func v5ResponseTopicAndCorrelationDataRoundTrip() async throws {
        let broker = try await Broker.start()
        let responder = try broker.client("responder")
        let seen = Inbox()
        _ = try await responder.subscribe("svc/req") { [weak responder] request in
            seen.handler(request)
            guard let topic = request.properties.responseTopic else { return }
            _ = try? responder?.publish(
                topic, payload: bytes("pong:") + request.payload, qos: .atLeastOnce,
                properties: MessageProperties(
                    correlationData: request.properties.correlationData, contentType: "text/plain",
                    userProperties: [UserProperty("status", "200")]))
        }

        // mosquitto_pub asks, mosquitto_sub sees the answer.
        let answers = try await broker.mosquittoSub("svc/resp/cli", id: "cli-requester", format: "%t %D %C %P %p")
        try await broker.mosquittoPub([
            "-t", "svc/req", "-m", "ping", "-D", "publish", "response-topic", "svc/resp/cli",
            "-D", "publish", "correlation-data", "abc123",
        ])
        #expect(await answers.waitForOutput(containing: "svc/resp/cli abc123 text/plain status:200 pong:ping\n"))

        // The library on both ends, with binary correlation data.
        let requester = try broker.client("requester")
        let replies = Inbox()
        _ = try await requester.subscribe("svc/resp/lib", handler: replies.handler)
        let correlation: [UInt8] = [0, 1, 0xfe, 0xff]
        try requester.publish(
            "svc/req", payload: bytes("hello"), qos: .atLeastOnce,
            properties: MessageProperties(
                responseTopic: "svc/resp/lib", correlationData: correlation, contentType: "text/plain",
                messageExpiryInterval: 60, userProperties: [UserProperty("a", "1"), UserProperty("a", "2")]))
        let reply = try #require(await replies.wait(for: 1).first)
        #expect(reply.payloadText == "pong:hello")
        #expect(reply.properties.correlationData == correlation)
        #expect(reply.properties.userProperties == [UserProperty("status", "200")])
        let request = try #require(seen.all.last)
        #expect(request.properties.responseTopic == "svc/resp/lib")
        #expect(request.properties.userProperties == [UserProperty("a", "1"), UserProperty("a", "2")])
        #expect(request.properties.contentType == "text/plain")
        #expect((1...60).contains(request.properties.messageExpiryInterval ?? 0))
        await requester.stop()
        await responder.stop()
    }

    @Test func usernameAndPasswordFromAPasswordFile() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try await run(["mosquitto_passwd", "-b", "-c", "\(directory)/passwords", "gateway", "s3cret"])
        #expect(made.status == 0, "\(made.error)")
        chmod("\(directory)/passwords", 0o644)
        let broker = try await Broker.start(listenerLines: [
            "allow_anonymous false", "password_file \(directory)/passwords",
        ])

        let good = try Client(
            configuration: Configuration(
                broker: try BrokerURL(parsing: "mqtt://gateway:s3cret@127.0.0.1:\(broker.port)"), clientID: "good"))
        good.start()
        #expect(await good.waitUntilConnected(timeout: .seconds(30)))
        let inbox = Inbox()
        _ = try await good.subscribe("private/#", handler: inbox.handler)
        try good.publish("private/x", payload: bytes("ok"), qos: .atLeastOnce)
        #expect(await inbox.wait(for: 1).first?.payloadText == "ok")

        let bad = try broker.client("bad") {
            $0.credentials = Configuration.Credentials(username: "gateway", password: "wrong")
        }
        let refusal = await firstState(of: bad) { state in
            if case .disconnected(let reason) = state { reason.contains("refused") } else { false }
        }
        #expect(refusal != nil)
        #expect(bad.statistics.connections == 0)
        await bad.stop()
        await good.stop()
    }

    @Test func tlsWithClientCertificates() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await makeCertificates(in: directory)
        let broker = try await Broker.start(listenerLines: [
            "cafile \(directory)/ca.crt", "certfile \(directory)/server.crt", "keyfile \(directory)/server.key",
            "require_certificate true",
        ])
        let url = "mqtts://127.0.0.1:\(broker.port)"
        let client = try Client(
            configuration: Configuration(
                broker: try BrokerURL(parsing: url), clientID: "tls-client",
                tls: Configuration.TLSFiles(
                    caFile: "\(directory)/ca.crt", certificateFile: "\(directory)/client.crt",
                    keyFile: "\(directory)/client.key")))
        client.start()
        #expect(await client.waitUntilConnected(timeout: .seconds(30)))
        let inbox = Inbox()
        _ = try await client.subscribe("secure/#", handler: inbox.handler)
        let independent = try await broker.mosquittoSub(
            "secure/#", id: "tls-independent",
            arguments: [
                "--cafile", "\(directory)/ca.crt", "--cert", "\(directory)/client.crt", "--key",
                "\(directory)/client.key",
            ])
        try client.publish("secure/a", payload: bytes("sealed"), qos: .atLeastOnce)
        #expect(await inbox.wait(for: 1).first?.payloadText == "sealed")
        #expect(await independent.waitForOutput(containing: "secure/a sealed\n"))

        // Without a client certificate the broker does not let it in.
        let anonymous = try Client(
            configuration: Configuration(
                broker: try BrokerURL(parsing: url), clientID: "tls-no-cert",
                tls: Configuration.TLSFiles(caFile: "\(directory)/ca.crt"), reconnectDelay: .milliseconds(100)))
        anonymous.start()
        // Two failed attempts (the state passes through .connecting between).
        for _ in 0..<2 {
            let failed = await firstState(of: anonymous) { state in
                if case .disconnected = state { true } else { false }
            }
            #expect(failed != nil)
            _ = await firstState(of: anonymous) { $0 == .connecting || $0 == .stopped }
        }
        #expect(anonymous.statistics.connections == 0)
        await anonymous.stop()
        await client.stop()
        #expect(throws: MQTTError.self) {
            try Client(
                configuration: Configuration(
                    broker: try BrokerURL(parsing: url), clientID: "x",
                    tls: Configuration.TLSFiles(caFile: "\(directory)/missing.crt")))
        }
    }

    @Test func qos1MessagesPublishedDuringABrokerOutageArriveAfterIt() async throws {
        let broker = try await Broker.start(persistent: true)
        let subscriber = try broker.client("outage-sub") {
            $0.cleanStart = false
            $0.sessionExpiryInterval = 600
        }
        let inbox = Inbox()
        _ = try await subscriber.subscribe("stream/#", qos: .atLeastOnce, handler: inbox.handler)
        let publisher = try broker.client("outage-pub")
        let states = StateRecorder(publisher)
        #expect(await publisher.waitUntilConnected(timeout: .seconds(30)))
        for index in 0..<10 { try publisher.publish("stream/a", payload: bytes("\(index)"), qos: .atLeastOnce) }
        #expect(await inbox.wait(for: 10).count == 10)

        await broker.stop()
        #expect(await waitForCondition { !publisher.connectionState.isConnected })
        for index in 10..<30 {
            #expect(try publisher.publish("stream/a", payload: bytes("\(index)"), qos: .atLeastOnce) == .sent)
        }
        #expect(try publisher.publish("stream/a", payload: bytes("lost"), qos: .atMostOnce) == .dropped)
        #expect(publisher.statistics.inFlight == 20)

        try await broker.restart()
        #expect(await publisher.waitUntilDelivered(timeout: .seconds(60)))
        // QoS 1 is at least once: a message may come twice, so wait for
        // every payload, not for a count.
        let expected = Set((0..<30).map(String.init))
        await waitForCondition(timeout: .seconds(30)) { expected.isSubset(of: Set(inbox.all.map(\.payloadText))) }
        let payloads = inbox.all.map(\.payloadText)
        #expect(Set(payloads) == Set((0..<30).map(String.init)))
        #expect(!payloads.contains("lost"))
        let statistics = publisher.statistics
        #expect(statistics.acknowledged == 30 && statistics.droppedWhileDisconnected == 1)
        #expect(statistics.connections == 2)
        #expect(await waitForCondition { states.seen.filter { $0 == .connected }.count == 2 })
        #expect(states.seen.contains { if case .disconnected = $0 { true } else { false } })
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func theOutboxIsBoundedAndDropsTheOldest() async throws {
        let broker = try await Broker.start(persistent: true)
        let subscriber = try broker.client("bounded-sub") {
            $0.cleanStart = false
            $0.sessionExpiryInterval = 600
        }
        let inbox = Inbox()
        _ = try await subscriber.subscribe("bounded/#", qos: .atLeastOnce, handler: inbox.handler)
        await broker.stop()

        // Never connected: two messages go to libmosquitto (the in-flight
        // window), three wait in the outbox, and each later one pushes the
        // oldest waiting one out.
        let publisher = try broker.client("bounded-pub") {
            $0.inFlightLimit = 2
            $0.outboxCapacity = 3
        }
        var outcomes: [PublishOutcome] = []
        for index in 0..<10 {
            outcomes.append(try publisher.publish("bounded/a", payload: bytes("\(index)"), qos: .atLeastOnce))
        }
        #expect(outcomes == [.sent, .sent, .queued, .queued, .queued] + Array(repeating: .queuedDroppingOldest, count: 5))
        var statistics = publisher.statistics
        #expect(statistics.inFlight == 2 && statistics.queued == 3 && statistics.droppedFromOutbox == 5)

        try await broker.restart()
        #expect(await publisher.waitUntilDelivered(timeout: .seconds(60)))
        try publisher.publish("bounded/a", payload: bytes("marker"), qos: .atLeastOnce)
        _ = await inbox.wait(for: 6)
        #expect(inbox.all.map(\.payloadText) == ["0", "1", "7", "8", "9", "marker"])
        // The broker may hand the marker to the subscriber before its
        // PUBACK reaches the publisher: wait for the acknowledgement.
        #expect(await publisher.waitUntilDelivered(timeout: .seconds(60)))
        statistics = publisher.statistics
        #expect(statistics.acknowledged == 5 + 1 && statistics.droppedFromOutbox == 5 && statistics.queued == 0)
        await publisher.stop()
        await subscriber.stop()
    }

    /// Something on the broker's port that takes the connection and never
    /// answers CONNECT: the client gives up on that connection and tries
    /// again, instead of waiting for ever.
    @Test func aConnectionWithoutCONNACKIsAbandonedAndTriedAgain() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 8) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        #expect(bound)
        // The kernel completes the handshakes (the backlog); nothing reads.
        let port = Int(UInt16(bigEndian: address.sin_port))
        let client = try Client(
            configuration: Configuration(
                broker: try BrokerURL(parsing: "mqtt://127.0.0.1:\(port)"), clientID: "unanswered",
                reconnectDelay: .milliseconds(100), maximumReconnectDelay: .milliseconds(100)))
        client.start()
        let given = await firstState(of: client, within: .seconds(60)) {
            if case .disconnected(let reason) = $0 { return reason.contains("CONNACK") }
            return false
        }
        #expect(given != nil)
        await client.stop()
    }

    @Test func rejectsBadTopicsAndFilters() async throws {
        let client = try Client(
            configuration: Configuration(broker: BrokerURL(host: "127.0.0.1", port: 1), clientID: "offline"))
        #expect(throws: MQTTError.self) { try client.publish("a/+/b", payload: []) }
        #expect(throws: MQTTError.self) { try client.publish("a/#", payload: []) }
        await #expect(throws: MQTTError.self) { _ = try await client.subscribe("a/#/b") { _ in } }
        #expect(throws: MQTTError.self) {
            try Client(configuration: Configuration(broker: BrokerURL(host: "h"), clientID: "k", keepAlive: 1))
        }
        await client.stop()
    }
}

/// Every connection state a client went through (until it stops).
final class StateRecorder: Sendable {
    private let states = Mutex<[ConnectionState]>([])

    init(_ client: Client) {
        let stream = client.connectionStates()
        Task { [self] in
            for await state in stream { record(state) }
        }
    }

    private func record(_ state: ConnectionState) { states.withLock { $0.append(state) } }

    var seen: [ConnectionState] { states.withLock { $0 } }
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, made
/// with openssl.
func makeCertificates(in directory: String) async throws {
    try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
        toFile: "\(directory)/server.ext", atomically: true, encoding: .utf8)
    let steps: [[String]] = [
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=blegateway test CA"],
        ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
        ["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "server.crt", "-days", "2", "-extfile", "server.ext"],
        ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=gateway"],
        ["openssl", "x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "client.crt", "-days", "2"],
    ]
    for step in steps {
        let result = try await run(["sh", "-c", "cd '\(directory)' && exec \"$@\"", "sh"] + step)
        guard result.status == 0 else { throw BrokerError("\(step.joined(separator: " ")): \(result.error)") }
    }
    for file in ["ca.crt", "server.crt", "server.key", "client.crt", "client.key"] {
        chmod("\(directory)/\(file)", 0o644)
    }
}
