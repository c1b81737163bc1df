@testable import BlueZ
import BlueZSimulator
import DBus
import Glibc
import TestSupport
import Testing

/// Notifications through AcquireNotify (the fd path) against the
/// simulator, which serves it as bluetoothd 5.66 does: a socket per
/// acquisition, one packet per value, exclusive with StartNotify.
@Suite(.serialized) struct AcquireNotifyTests {
    static let target = address("C0:FF:EE:00:00:02")
    static let simulated = DeviceAddress("C0:FF:EE:00:00:02")
    static let echo = BluetoothUUID(uuid16: 0xfa01)
    static let indicated = BluetoothUUID(uuid16: 0xfa02)
    static let scenario = """
        devices:
          - address: "C0:FF:EE:00:00:02"
            name: Acquire Target
            advertising: { interval: 0.5 }
            services:
              - uuid: "fa00"
                characteristics:
                  - uuid: "fa01"
                    flags: [read, write-without-response, notify]
                    behaviour: echo
                  - uuid: "fa02"
                    flags: [read, write, indicate]
                    behaviour: echo
        """

    private func connectedHarness(_ notifyPath: NotifyPath = .acquire) async throws -> Harness {
        var options = Central.Options()
        options.notifyPath = notifyPath
        let harness = try await Harness(scenario: try Scenario.parse(Self.scenario), central: options)
        try await harness.connected(Self.target)
        return harness
    }

    private func flag(_ name: String, of uuid: BluetoothUUID, _ harness: Harness) async throws -> Bool? {
        let path = try harness.central.characteristic(.uuid(uuid), of: Self.target).path
        return try await harness.otherClientCall(
            path, "org.freedesktop.DBus.Properties", "Get",
            [.string("org.bluez.GattCharacteristic1"), .string(name)]
        ).first?.bool
    }

    /// Values pushed one at a time, each awaited before the next is sent:
    /// all of them arrive, in order, and none as a D-Bus message.
    @Test func theFdPathDeliversEveryValueInOrder() async throws {
        let harness = try await connectedHarness()
        let subscription = try await harness.central.subscribe(to: .uuid(Self.echo), of: Self.target)
        #expect(try await flag("NotifyAcquired", of: Self.echo, harness) == true)
        #expect(try await flag("Notifying", of: Self.echo, harness) == false)
        // Exclusive: another client's StartNotify is refused while we hold the socket.
        let path = try harness.central.characteristic(.uuid(Self.echo), of: Self.target).path
        await #expect {
            try await harness.otherClientCall(path, "org.bluez.GattCharacteristic1", "StartNotify")
        } throws: { ($0 as? DBusError)?.name.rawValue == "org.bluez.Error.NotPermitted" }

        let simulator = try #require(Self.simulated)
        let received = Task { () -> [[UInt8]] in
            var values: [[UInt8]] = []
            var iterator = subscription.makeAsyncIterator()
            let before = harness.connection.statistics.messagesReceived
            for index in 0..<300 {
                try await harness.simulator.setValue(
                    [UInt8(index >> 8), UInt8(index & 0xff)], characteristic: GATTUUID(short: 0xfa01), of: simulator)
                guard let value = try await iterator.next() else { break }
                values.append(value.value)
            }
            #expect(harness.connection.statistics.messagesReceived == before, "no D-Bus message per value")
            return values
        }
        let values = try await value(of: received, within: .seconds(60))
        let sent: [[UInt8]] = (0..<300).map { (index: Int) -> [UInt8] in [UInt8(index >> 8), UInt8(index & 0xff)] }
        #expect(values == sent)
        await harness.shutdown()
    }

    /// The thread that delivers is held up (a consumer on it that takes its
    /// time, as a busy machine would) while far more values come than
    /// bluetoothd's socket holds (about 278; it drops the rest): the
    /// reader thread keeps taking them off the socket, and every one
    /// arrives, in order, once the delivering thread is back.
    @Test func valuesWaitWhileTheDeliveringThreadIsHeldUp() async throws {
        let harness = try await connectedHarness()
        let received = Recorded<[[UInt8]]>([])
        let allSent = Recorded(false)
        let lease = try await harness.central.subscribe(
            to: .uuid(Self.echo), of: Self.target,
            sink: NotificationSink(
                receive: { event in
                    guard case .value(let value) = event else { return }
                    let first = received.value.withLock { values in
                        values.append(value.value)
                        return values.count == 1
                    }
                    // On the delivering thread: nothing else is delivered
                    // until every value has been sent.
                    let deadline = ContinuousClock.now + .seconds(60)
                    while first, !allSent.value.withLock({ $0 }), ContinuousClock.now < deadline { usleep(1_000) }
                },
                ended: { _ in }))
        let simulator = try #require(Self.simulated)
        let sent: [[UInt8]] = (0..<1_000).map { (index: Int) -> [UInt8] in [UInt8(index >> 8), UInt8(index & 0xff)] }
        for (index, value) in sent.enumerated() {
            try await harness.simulator.setValue(value, characteristic: GATTUUID(short: 0xfa01), of: simulator)
            // Paced, as a link delivers them: the reader, not a burst, is
            // what is tested.
            if index % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }
        }
        allSent.value.withLock { $0 = true }
        #expect(await eventually(within: .seconds(30)) { received.value.withLock { $0.count } >= sent.count })
        let values = received.value.withLock { $0 }
        #expect(values == sent, "\(values.count) of \(sent.count) values, the last \(values.last ?? [])")
        lease.cancel()
        await harness.shutdown()
    }

    /// The last consumer leaving closes the socket, which is StopNotify
    /// for bluetoothd: NotifyAcquired turns false and others may subscribe.
    @Test func closingTheSocketEndsTheSubscription() async throws {
        let harness = try await connectedHarness()
        let consumer = Task {
            let subscription = try await harness.central.subscribe(to: .uuid(Self.echo), of: Self.target)
            for try await _ in subscription { break }
        }
        #expect(await eventually { (try? await self.flag("NotifyAcquired", of: Self.echo, harness)) == true })
        try await harness.simulator.setValue([1], characteristic: GATTUUID(short: 0xfa01), of: try #require(Self.simulated))
        try await consumer.value
        #expect(await eventually { (try? await self.flag("NotifyAcquired", of: Self.echo, harness)) == false })
        let path = try harness.central.characteristic(.uuid(Self.echo), of: Self.target).path
        _ = try await harness.otherClientCall(path, "org.bluez.GattCharacteristic1", "StartNotify")
        await harness.shutdown()
    }

    /// The link drops: bluetoothd shuts the socket down, and the stream
    /// ends with the same reason as on the StartNotify path.
    @Test func aDisconnectionHangsUpAndEndsTheStreamWithAReason() async throws {
        let harness = try await connectedHarness()
        let subscription = try await harness.central.subscribe(to: .uuid(Self.echo), of: Self.target)
        // A sink's lease on the same subscription learns the end as a type.
        let sinkEnd = Recorded<SubscriptionEnd?>(nil)
        let lease = try await harness.central.subscribe(
            to: .uuid(Self.echo), of: Self.target,
            sink: NotificationSink(receive: { _ in }, ended: { end in sinkEnd.value.withLock { $0 = end } }))
        #expect(try await flag("NotifyAcquired", of: Self.echo, harness) == true)
        let ended = Task { () -> (any Error)? in
            do {
                for try await _ in subscription {}
                return nil
            } catch {
                return error
            }
        }
        try await harness.simulator.dropConnection(try #require(Self.simulated))
        let error = await value(of: ended, within: .seconds(30)) as? BlueZError
        #expect(error?.code == .notConnected)
        #expect(error?.message.contains("disconnected") == true, "\(String(describing: error))")
        #expect(await eventually { sinkEnd.value.withLock { $0?.reason } == .deviceDisconnected })
        lease.cancel()
        #expect(try await flag("NotifyAcquired", of: Self.echo, harness) == false)
        await harness.shutdown()
    }

    /// Another client holds a StartNotify session: AcquireNotify is
    /// InProgress, so the central falls back to StartNotify and values flow.
    @Test func aRefusedAcquireFallsBackToStartNotify() async throws {
        let harness = try await connectedHarness()
        let path = try harness.central.characteristic(.uuid(Self.echo), of: Self.target).path
        _ = try await harness.otherClientCall(path, "org.bluez.GattCharacteristic1", "StartNotify")
        let subscription = try await harness.central.subscribe(to: .uuid(Self.echo), of: Self.target)
        #expect(try await flag("NotifyAcquired", of: Self.echo, harness) == false)
        let first = Task { try await subscription.first { _ in true }?.value }
        try await harness.simulator.setValue([7], characteristic: GATTUUID(short: 0xfa01), of: try #require(Self.simulated))
        #expect(try await value(of: first, within: .seconds(30)) == [7])
        await harness.shutdown()
    }

    /// Indications have no fd path: StartNotify, and bluetoothd reports
    /// Notifying.
    @Test func indicationsUseStartNotify() async throws {
        let harness = try await connectedHarness()
        let subscription = try await harness.central.subscribe(to: .uuid(Self.indicated), of: Self.target)
        #expect(await eventually { (try? await self.flag("Notifying", of: Self.indicated, harness)) == true })
        let first = Task { try await subscription.first { _ in true }?.value }
        try await harness.central.write([5], to: .uuid(Self.indicated), of: Self.target)
        #expect(try await value(of: first, within: .seconds(30)) == [5])
        await harness.shutdown()
    }

    /// `.startNotify` keeps the signal path even where AcquireNotify is offered.
    @Test func startNotifyCanBeChosen() async throws {
        let harness = try await connectedHarness(.startNotify)
        let subscription = try await harness.central.subscribe(to: .uuid(Self.echo), of: Self.target)
        #expect(try await flag("NotifyAcquired", of: Self.echo, harness) == false)
        #expect(await eventually { (try? await self.flag("Notifying", of: Self.echo, harness)) == true })
        _ = subscription
        await harness.shutdown()
    }

    /// AcquireWrite as bluetoothd serves it: one packet is one Write
    /// Command; exclusive; closing the socket gives it back.
    @Test func acquireWriteSendsEachPacketAsAWriteCommand() async throws {
        let harness = try await connectedHarness()
        let path = try harness.central.characteristic(.uuid(Self.echo), of: Self.target).path
        let reply = try await harness.otherClientCall(path, "org.bluez.GattCharacteristic1", "AcquireWrite", [.vardict([:])])
        let fd = try #require(reply.first?.unixFD)
        #expect(reply.last?.uint16 == 517)
        #expect(try await flag("WriteAcquired", of: Self.echo, harness) == true)
        await #expect {
            try await harness.otherClientCall(path, "org.bluez.GattCharacteristic1", "AcquireWrite", [.vardict([:])])
        } throws: { ($0 as? DBusError)?.name.rawValue == "org.bluez.Error.NotPermitted" }
        // WriteValue waits for the socket to go.
        await #expect {
            try await harness.central.write([1], to: .uuid(Self.echo), of: Self.target, type: .command)
        } throws: { ($0 as? BlueZError)?.dbusName == "org.bluez.Error.NotPermitted" }
        let bytes: [UInt8] = [0xab, 0xcd]
        #expect(bytes.withUnsafeBytes { send(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == 2)
        #expect(await eventually { (try? await harness.central.read(.uuid(Self.echo), of: Self.target)) == bytes })
        _ = Glibc.close(fd.rawValue)
        #expect(await eventually { (try? await self.flag("WriteAcquired", of: Self.echo, harness)) == false })
        await harness.shutdown()
    }
}
