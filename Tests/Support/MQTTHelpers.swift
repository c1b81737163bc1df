import Foundation
import MQTT
import Synchronization

/// Messages a handler received, for a test to wait on.
public final class Inbox: Sendable {
    public init() {}
    private let messages = Mutex<[Message]>([])

    public var handler: @Sendable (Message) -> Void { { [self] message in messages.withLock { $0.append(message) } } }
    public var all: [Message] { messages.withLock { $0 } }

    /// Waits until at least `count` messages arrived (or 30 s passed) and
    /// returns those that did.
    public func wait(for count: Int, timeout: Duration = .seconds(30)) async -> [Message] {
        await waitForCondition(timeout: timeout) { self.all.count >= count }
        return all
    }
}

/// Waits until `condition` holds or `timeout` passes; returns whether it held.
@discardableResult
public func waitForCondition(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

extension Broker {
    /// A started client of this broker.
    public func client(
        _ id: String, configure: (inout Configuration) throws -> Void = { _ in }
    ) throws -> Client {
        var configuration = Configuration(
            broker: try BrokerURL(parsing: url), clientID: id, reconnectDelay: .milliseconds(100),
            maximumReconnectDelay: .milliseconds(500))
        try configure(&configuration)
        let client = try Client(configuration: configuration)
        client.start()
        return client
    }

    /// `mosquitto_sub` (MQTT 5) on `topic` with `arguments`, once the broker
    /// shows its subscription. It prints each message as `format`.
    public func mosquittoSub(
        _ topic: String, id: String, format: String = "%t %p", arguments: [String] = []
    ) async throws -> ChildProcess {
        let child = try ChildProcess(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv5", "-q", "1", "-i", id, "-t", topic,
             "-F", format] + arguments)
        guard await waitForSubscription(client: id, filter: topic) else {
            throw BrokerError("mosquitto_sub did not subscribe: \(child.standardError)\n\(log)")
        }
        return child
    }

    /// Runs `mosquitto_pub` (MQTT 5) with `arguments` and waits for it.
    public func mosquittoPub(_ arguments: [String]) async throws {
        let result = try await run(
            ["mosquitto_pub", "-h", "127.0.0.1", "-p", "\(port)", "-V", "mqttv5"] + arguments)
        guard result.status == 0 else { throw BrokerError("mosquitto_pub failed: \(result.error)") }
    }
}

public func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The first connection state of `client` (from now on) that satisfies
/// `condition`, or nil after `timeout`.
public func firstState(
    of client: Client, within timeout: Duration = .seconds(30), where condition: @escaping @Sendable (ConnectionState) -> Bool
) async -> ConnectionState? {
    await firstEvent(of: client.connectionStates(), within: timeout, where: condition)
}
