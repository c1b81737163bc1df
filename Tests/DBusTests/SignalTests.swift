@testable import DBus
import Synchronization
import TestSupport
import Testing

@Suite struct SignalTests {
    static let tick = MatchRule(interface: EchoService.interfaceName, member: "Tick")

    @Test func signalsArriveInOrder() async throws {
        let bus = try TestBus()
        let emitter = try await bus.connect()
        let listener = try await bus.connect()
        defer { listener.close(); emitter.close() }

        let stream = try await listener.signals(matching: Self.tick)
        for count in 0..<2_000 {
            try emitter.emitSignal(
                path: EchoService.path, interface: EchoService.interfaceName, member: "Tick",
                arguments: [.uint32(UInt32(count))])
        }
        var received: [UInt32] = []
        for try await signal in stream {
            received.append(signal.body.first?.uint32 ?? .max)
            #expect(signal.sender == emitter.uniqueName)
            if received.count == 2_000 { break }
        }
        #expect(received == (0..<2_000).map(UInt32.init))
    }

    @Test func eachSubscriptionGetsOnlyItsOwnSignals() async throws {
        let bus = try TestBus()
        let emitter = try await bus.connect()
        let listener = try await bus.connect()
        defer { listener.close(); emitter.close() }

        let ticks = try await listener.signals(matching: Self.tick)
        let changes = try await listener.signals(
            matching: MatchRule(interface: .properties, member: "PropertiesChanged", path: "/a"))
        try emitter.emitSignal(
            path: "/b", interface: .properties, member: "PropertiesChanged",
            arguments: [.string("x.y"), .vardict([:]), .strings([])])
        try emitter.emitSignal(
            path: "/a", interface: .properties, member: "PropertiesChanged",
            arguments: [.string("x.y"), .vardict(["N": .int32(1)]), .strings([])])
        try emitter.emitSignal(path: "/", interface: EchoService.interfaceName, member: "Tick", arguments: [.uint32(9)])

        var changeIterator = changes.makeAsyncIterator()
        let change = try await changeIterator.next()
        #expect(change?.path == "/a")
        var tickIterator = ticks.makeAsyncIterator()
        let tick = try await tickIterator.next()
        #expect(tick?.body == [.uint32(9)])
    }

    /// Whether the name has its owner before the subscription (its lookup
    /// finds it) or only after (the lookup answers NameHasNoOwner, and the
    /// owner comes with `NameOwnerChanged`).
    @Test(arguments: [true, false]) func aWellKnownSenderMatchesOnlyItsOwner(ownedFirst: Bool) async throws {
        let bus = try TestBus()
        let owner = try await bus.connect()
        let impostor = try await bus.connect()
        let listener = try await bus.connect()
        defer { listener.close(); impostor.close(); owner.close() }
        if ownedFirst { try await EchoService.serve(on: owner) }

        var rule = Self.tick
        rule.sender = EchoService.name
        let stream = try await listener.signals(matching: rule)
        if !ownedFirst { try await EchoService.serve(on: owner) }
        // Another connection listening for everything makes the bus route the
        // impostor's signal to the listener too, so only local matching on
        // the owner can keep it out.
        let everything = try await listener.signals(matching: Self.tick)
        try impostor.emitSignal(
            path: EchoService.path, interface: EchoService.interfaceName, member: "Tick", arguments: [.uint32(1)])
        try owner.emitSignal(
            path: EchoService.path, interface: EchoService.interfaceName, member: "Tick", arguments: [.uint32(2)])

        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.body == [.uint32(2)])
        #expect(first?.sender == owner.uniqueName)
        var all = everything.makeAsyncIterator()
        _ = try await all.next()
    }

    @Test func endingTheStreamRemovesTheMatchRule() async throws {
        let bus = try TestBus()
        let listener = try await bus.connect()
        let observer = try await bus.connect()
        defer { observer.close(); listener.close() }

        let baseline = try await bus.matchRules(of: listener, asking: observer)
        do {
            let stream = try await listener.signals(matching: Self.tick)
            #expect(try await bus.matchRules(of: listener, asking: observer) == baseline + 1)
            let task = Task {
                for try await _ in stream {}
            }
            task.cancel()
            _ = await task.result
        }
        var rules = try await bus.matchRules(of: listener, asking: observer)
        for _ in 0..<100 where rules != baseline {
            try await Task.sleep(for: .milliseconds(20))
            rules = try await bus.matchRules(of: listener, asking: observer)
        }
        #expect(rules == baseline)
    }

    @Test func aConsumerThatFallsBehindIsToldSo() async throws {
        let bus = try TestBus()
        let emitter = try await bus.connect()
        let listener = try await bus.connect()
        defer { listener.close(); emitter.close() }

        let stream = try await listener.signals(matching: Self.tick, bufferSize: 10)
        for count in 0..<100 {
            try emitter.emitSignal(
                path: "/", interface: EchoService.interfaceName, member: "Tick", arguments: [.uint32(UInt32(count))])
        }
        // Let them all arrive before reading any.
        _ = try await emitter.call(destination: listener.uniqueName, path: "/", interface: .peer, method: "Ping")
        try await Task.sleep(for: .milliseconds(200))
        var received = 0
        let error = await #expect(throws: DBusError.self) {
            for try await _ in stream { received += 1 }
        }
        #expect(error?.name == .limitsExceeded)
        #expect(received == 10)
    }

    @Test func closingTheConnectionEndsStreamsAndCalls() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close() }
        try await EchoService.serve(on: server)

        let stream = try await client.signals(matching: Self.tick)
        let pending = Task {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Sleep", arguments: [.uint32(10_000)])
        }
        try await Task.sleep(for: .milliseconds(100))
        client.close()
        let callError = await #expect(throws: DBusError.self) { try await pending.value }
        #expect(callError?.isDisconnected == true)
        let streamError = await #expect(throws: DBusError.self) { for try await _ in stream {} }
        #expect(streamError?.isDisconnected == true)
        #expect(!client.isConnected)
        let lateError = await #expect(throws: DBusError.self) {
            try await client.call(destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "GetId")
        }
        #expect(lateError?.isDisconnected == true)
    }

    @Test func theBusGoingAwayIsNoticed() async throws {
        let bus = try TestBus()
        let client = try await bus.connect()
        let stream = try await client.signals(matching: Self.tick)
        bus.daemon.stop()
        let error = await #expect(throws: DBusError.self) { for try await _ in stream {} }
        #expect(error?.isDisconnected == true)
        #expect(!client.isConnected)
        client.close()
    }

    @Test func connectionsLeaveNoThreadOrDescriptorBehind() async throws {
        let bus = try TestBus()
        // Warm up whatever the runtime allocates once.
        try await bus.connect().close()
        let threadsBefore = dbusLoopThreads()
        // This test's own descriptors, not a count of the process's: suites
        // running in parallel open and close their own. The bus sockets by
        // inode; each wake-up eventfd is closed when its loop is freed.
        var sockets: Set<String> = []
        let loops = Mutex<[Weak<EventLoop>]>([])
        for _ in 0..<20 {
            let connection = try await bus.connect()
            _ = try await connection.signals(matching: Self.tick)
            _ = try await connection.call(
                destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "GetId")
            sockets.formUnion(connection.loop.ownDescriptors.compactMap(descriptorIdentity))
            loops.withLock { $0.append(Weak(connection.loop)) }
            connection.close()
        }
        #expect(sockets.count == 20)
        #expect(sockets.isDisjoint(with: openDescriptorIdentities()), "still open: \(sockets.intersection(openDescriptorIdentities()))")
        #expect(await eventually { loops.withLock { $0.allSatisfy { $0.object == nil } } }, "a closed connection's loop (and its eventfd) is still held")
        let threadsAfter = dbusLoopThreads()
        // Other tests run in parallel and open connections of their own, so
        // allow for a few loop threads; 20 leaked ones would be far more.
        #expect(threadsAfter < threadsBefore + 10, "dbus-loop threads: \(threadsBefore) -> \(threadsAfter)")
    }
}
