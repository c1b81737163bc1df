// A separate process using the MQTT module, for what a test cannot do in its
// own process (be killed with a Last Will set) and for measuring throughput
// through a local broker.
//
//   mqtt-probe will URL CLIENT-ID WILL-TOPIC WILL-PAYLOAD
//       connects with that Will, prints "connected", then waits for "stop" on
//       standard input, stops cleanly and prints "stopped".
//   mqtt-probe bench URL QOS COUNT PAYLOAD-BYTES
//       publishes COUNT messages at QOS to a topic another client of its own
//       subscribes to, and prints the rate at which they arrived.
import Glibc
import MQTT
import Synchronization
import Foundation

let arguments = CommandLine.arguments
func fail(_ text: String) -> Never {
    let line = Array("mqtt-probe: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}
/// Prints a line and flushes it at once (standard output is a pipe).
func say(_ text: String) {
    print(text)
    fflush(nil)
}

guard arguments.count >= 2 else { fail("usage: mqtt-probe will|bench …") }
switch arguments[1] {
case "will":
    guard arguments.count == 6 else { fail("usage: mqtt-probe will URL CLIENT-ID WILL-TOPIC WILL-PAYLOAD") }
    let configuration = Configuration(
        broker: try BrokerURL(parsing: arguments[2]), clientID: arguments[3], keepAlive: 5,
        will: Will(topic: arguments[4], payload: Array(arguments[5].utf8), qos: .atLeastOnce, retain: false))
    let client = try Client(configuration: configuration)
    client.start()
    guard await client.waitUntilConnected(timeout: .seconds(30)) else { fail("not connected") }
    say("connected")
    while let line = readLine() {
        if line == "stop" { break }
    }
    await client.stop()
    say("stopped")

case "bench":
    guard arguments.count == 6, let qos = Int(arguments[3]).flatMap(QoS.init(rawValue:)),
        let count = Int(arguments[4]), let size = Int(arguments[5])
    else { fail("usage: mqtt-probe bench URL QOS COUNT PAYLOAD-BYTES") }
    let broker = try BrokerURL(parsing: arguments[2])
    let subscriber = try Client(configuration: Configuration(broker: broker, clientID: "bench-sub-\(getpid())"))
    let publisher = try Client(
        configuration: Configuration(broker: broker, clientID: "bench-pub-\(getpid())", outboxCapacity: count))
    subscriber.start()
    publisher.start()
    guard await subscriber.waitUntilConnected(timeout: .seconds(30)),
        await publisher.waitUntilConnected(timeout: .seconds(30))
    else { fail("not connected") }
    let received = Counter()
    _ = try await subscriber.subscribe("bench/\(getpid())", qos: qos) { _ in received.increment() }
    let payload = [UInt8](repeating: 0x61, count: size)
    let start = ContinuousClock.now
    var dropped = 0
    for _ in 0..<count {
        if try publisher.publish("bench/\(getpid())", payload: payload, qos: qos) == .dropped { dropped += 1 }
    }
    let published = ContinuousClock.now
    let deadline = start + .seconds(120)
    var last = received.value
    var lastChange = ContinuousClock.now
    // Wait for every message, or (QoS 0 may lose some) for one quiet second.
    while received.value < count - dropped && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(1))
        if received.value != last {
            last = received.value
            lastChange = ContinuousClock.now
        } else if ContinuousClock.now - lastChange > .seconds(1) {
            break
        }
    }
    let elapsed = (lastChange > start ? max(lastChange, published) : published) - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let got = received.value
    say(
        "qos=\(qos.rawValue) payload=\(size)B published=\(count) dropped=\(dropped) received=\(got) "
            + "seconds=\(String(format: "%.3f", seconds)) rate=\(Int(Double(got) / seconds))/s")
    await publisher.stop()
    await subscriber.stop()

default:
    fail("unknown mode \(arguments[1])")
}

/// A count shared with the client's thread.
final class Counter: Sendable {
    private let count = Atomic(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
