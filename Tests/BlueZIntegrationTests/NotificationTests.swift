@testable import BlueZ
import BlueZSimulator
import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite(.serialized) struct NotificationTests {
    @Test func twoConsumersShareOneStartNotify() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        let path = try central.characteristic(.uuid(Harness.measurement), of: Harness.strap).path
        let first = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        let second = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        #expect(await eventually { (try? central.characteristic(.uuid(Harness.measurement), of: Harness.strap).notifying) == true })
        // The strap notifies once a second (real time in the simulator).
        async let a = collect(first, for: .milliseconds(2600))
        async let b = collect(second, for: .milliseconds(2600))
        let (valuesA, valuesB) = await (a, b)
        #expect(valuesA.count >= 2)
        #expect(valuesB.count >= 2)
        // Both see the same values in the same order. The first consumer may
        // hold one value from before the second joined, and the two windows
        // may close a value apart: at most one value differs at either end.
        #expect(
            sameRun(valuesA.map(\.value), valuesB.map(\.value)),
            "\(valuesA.map(\.value)) vs \(valuesB.map(\.value))")
        #expect(valuesA.allSatisfy { $0.device == Harness.strap && $0.characteristic == Harness.measurement && $0.service == Harness.heartRate })
        // Both consumers left: StopNotify went out, bluetoothd stops notifying.
        #expect(await eventually { (try? central.characteristic(.uuid(Harness.measurement), of: Harness.strap).notifying) == false })
        _ = path
        await harness.shutdown()
    }

    @Test func aConsumerThatStopsLeavesTheOtherOneSubscribed() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        let stays = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        let leaves = Task {
            let subscription = try await central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
            for try await _ in subscription { break }  // one value, then stop consuming
        }
        try await leaves.value
        let values = await collect(stays, for: .milliseconds(2600))
        #expect(values.count >= 2)
        await harness.shutdown()
    }

    /// The StartNotify path: a PropertiesChanged per value (the fd path
    /// has none, AcquireNotifyTests).
    @Test func oneMessagePerNotification() async throws {
        var options = Central.Options()
        options.notifyPath = .startNotify
        let harness = try await Harness(central: options)
        try await harness.connected(Harness.strap)
        let subscription = try await harness.central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        let connection = harness.connection
        // Counted between the first and the fourth value, so that the
        // window holds exactly three notifications whatever the timing.
        let counts = Task { () -> (received: Int, sent: Int)? in
            var first: Connection.Statistics?
            var seen = 0
            for try await _ in subscription {
                seen += 1
                if seen == 1 { first = connection.statistics }
                if seen == 4, let first {
                    let now = connection.statistics
                    return (now.messagesReceived - first.messagesReceived, now.messagesSent - first.messagesSent)
                }
            }
            return nil
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(10))
            counts.cancel()
        }
        let result = try await counts.value
        timer.cancel()
        let window = try #require(result)
        // One PropertiesChanged in per notification; nothing out. (The
        // strap also drains its battery once a minute: one more at most.)
        #expect(window.received >= 3 && window.received <= 4, "received \(window.received) for 3 notifications")
        #expect(window.sent == 0)
        await harness.shutdown()
    }

    @Test func disconnectEndsTheSubscriptionWithAReason() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let subscription = try await harness.central.subscribe(to: .uuid(Harness.measurement), of: Harness.strap)
        let consumer = Task { () -> BlueZError? in
            do {
                for try await _ in subscription {}
                return nil
            } catch {
                return error as? BlueZError
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let path = try harness.central.device(Harness.strap).path
        _ = try await harness.otherClientCall(path, "org.bluez.Device1", "Disconnect")
        let ending = await consumer.value
        #expect(ending?.code == .notConnected)
        await harness.shutdown()
    }

    /// A sink and an event handler are called after the central's lock is
    /// released: they may read the central (under the lock they would
    /// deadlock on it). The sink's values keep bluetoothd's order, and the
    /// disconnection ends the lease with a typed reason, after the last value.
    @Test func sinksRunOutsideTheLockInOrderAndEndWithATypedReason() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        let central = harness.central
        let seen = Recorded(Seen())
        let handler = central.addEventHandler(.all) { event in
            guard case .characteristicValue = event else { return }
            _ = central.adapters()  // takes the central's lock
            seen.value.withLock { $0.handled += 1 }
        }
        let lease = try await central.subscribe(
            to: .uuid(Harness.measurement), of: Harness.strap,
            sink: NotificationSink(
                receive: { event in
                    guard case .value(let value) = event else { return }
                    let connected = (try? central.device(Harness.strap).connected) ?? false  // takes it too
                    seen.value.withLock { seen in
                        if seen.end != nil { seen.afterEnd += 1 }
                        seen.values.append(value.timestamp)
                        seen.connectedWhenCalled.append(connected)
                    }
                },
                ended: { end in seen.value.withLock { $0.end = end } }))
        #expect(await eventually(within: .seconds(10)) { seen.value.withLock { $0.values.count >= 3 } })
        let path = try central.device(Harness.strap).path
        _ = try await harness.otherClientCall(path, "org.bluez.Device1", "Disconnect")
        #expect(await eventually(within: .seconds(10)) { seen.value.withLock { $0.end != nil } })
        let result = seen.value.withLock { $0 }
        #expect(result.end?.reason == .deviceDisconnected)
        #expect(result.end?.error.code == .notConnected)
        #expect(result.afterEnd == 0, "no value after the end")
        #expect(result.values == result.values.sorted(), "values in the order they were received")
        #expect(result.connectedWhenCalled.allSatisfy { $0 })
        #expect(result.handled >= 3)
        if let handler { central.removeEventHandler(handler) }
        lease.cancel()
        await harness.shutdown()
    }

    struct Seen {
        var values: [Date] = []
        var connectedWhenCalled: [Bool] = []
        var handled = 0
        var end: SubscriptionEnd?
        var afterEnd = 0
    }

    @Test func subscribingToWhatCannotNotifyIsNotSupported() async throws {
        let harness = try await Harness()
        try await harness.connected(Harness.strap)
        await #expect {
            try await harness.central.subscribe(to: .uuid(Harness.sensorLocation), of: Harness.strap)
        } throws: { ($0 as? BlueZError)?.code == .notSupported }
        await harness.shutdown()
    }
}

/// Consumers that come and go while values pour in.
@Suite struct NotificationChurnTests {
    static let counter = address("C0:FF:EE:00:00:01")
    static let fast = BluetoothUUID(uuid16: 0xfff1)
    static let scenario = """
        devices:
          - address: "C0:FF:EE:00:00:01"
            name: Fast Counter
            advertising: { interval: 0.5 }
            services:
              - uuid: "fff0"
                characteristics:
                  - uuid: "fff1"
                    flags: [read, notify]
                    behaviour: { kind: counter, size: 4, rate: 1000 }
        """

    /// A consumer cancelled while the central hands it a value: its
    /// stream's termination and the delivery meet. Hundreds of times, with
    /// a value every millisecond, none may hang or leak a subscriber.
    @Test func cancellingConsumersWhileValuesArriveNeverHangs() async throws {
        let harness = try await Harness(scenario: try Scenario.parse(Self.scenario))
        try await harness.connected(Self.counter)
        let central = harness.central
        // Keeps the characteristic notifying between the consumers.
        let steady = try await central.subscribe(to: .uuid(Self.fast), of: Self.counter)
        let churn = Task {
            var completed = 0
            for _ in 0..<400 {
                let consumer = Task {
                    let subscription = try await central.subscribe(to: .uuid(Self.fast), of: Self.counter)
                    for try await _ in subscription {}
                }
                try await Task.sleep(for: .microseconds(Int.random(in: 500...3000)))
                consumer.cancel()
                _ = await consumer.result
                completed += 1
            }
            return completed
        }
        let completed = try await value(of: churn, within: .seconds(60))
        #expect(completed == 400)
        #expect(await firstEvent(of: steady, within: .seconds(5)) { _ in true } != nil, "the steady consumer still receives")
        await harness.shutdown()
    }
}

/// Whether `a` and `b` are the same run of values, allowing one extra value
/// at either end of either: the overlap is at least two values long.
private func sameRun(_ a: [[UInt8]], _ b: [[UInt8]]) -> Bool {
    for dropA in 0...min(1, a.count) {
        for dropB in 0...min(1, b.count) {
            let x = Array(a.dropFirst(dropA)), y = Array(b.dropFirst(dropB))
            let common = min(x.count, y.count)
            if common >= 2, x.count - common <= 1, y.count - common <= 1, x.prefix(common) == y.prefix(common) {
                return true
            }
        }
    }
    return false
}
