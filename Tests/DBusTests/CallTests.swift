import DBus
import TestSupport
import Foundation
import Synchronization
import Testing

@Suite struct CallTests {
    @Test func connectsWithAUniqueName() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer { connection.close() }
        #expect(connection.uniqueName.isUnique)
        let names = try await connection.call(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, method: "ListNames")
        #expect(names.first?.strings?.contains(connection.uniqueName.rawValue) == true)
    }

    @Test func callsAnExportedMethod() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let upper = try await client.call(
            destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
            method: "Upper", arguments: [.string("heart rate")])
        #expect(upper == [.string("HEART RATE")])

        let nested = Value.variant(.vardict(["Value": .bytes([0x0e, 0x77]), "Offset": .uint16(2)]))
        let echoed = try await client.call(
            destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
            method: "Echo", arguments: [nested])
        #expect(echoed == [nested])
    }

    @Test func errorRepliesKeepTheirNameAndMessage() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let error = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Fail", arguments: [.string("org.bluez.Error.NotPermitted"), .string("Read not permitted")])
        }
        #expect(error?.name.rawValue == "org.bluez.Error.NotPermitted")
        #expect(error?.message == "Read not permitted")
    }

    @Test func wellKnownErrorsAreRecognised() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let unknownService = await #expect(throws: DBusError.self) {
            try await client.call(destination: "org.example.Nobody", path: "/", interface: .peer, method: "Ping")
        }
        #expect(unknownService?.isServiceUnknown == true)

        let unknownObject = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: "/nothing/here", interface: EchoService.interfaceName,
                method: "Upper", arguments: [.string("x")])
        }
        #expect(unknownObject?.isUnknownObject == true)

        let unknownMethod = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Lower", arguments: [.string("x")])
        }
        #expect(unknownMethod?.isUnknownMethod == true)

        let wrongArguments = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Upper", arguments: [.int32(1)])
        }
        #expect(wrongArguments?.name == .invalidArgs)

        let badReply = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "WrongReply")
        }
        #expect(badReply?.name == .failed)
    }

    @Test func timesOutWithNoReply() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let started = ContinuousClock.now
        let error = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Sleep", arguments: [.uint32(120_000)], timeout: .milliseconds(200))
        }
        #expect(error?.isNoReply == true)
        // The reply would take two minutes: an end well before that came
        // from the timeout, however slowly a loaded machine schedules us.
        #expect(ContinuousClock.now - started < .seconds(60))
        // The connection is still good.
        let reply = try await client.call(
            destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
            method: "Sleep", arguments: [.uint32(1)])
        #expect(reply == [.uint32(1)])
    }

    @Test func cancellationEndsTheWait() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        // The reply would take two minutes: a wait that ends well before
        // that was ended by the cancellation, however slow the machine.
        let task = Task {
            try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Sleep", arguments: [.uint32(120_000)], timeout: .seconds(180))
        }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - started < .seconds(60))

        // A task cancelled before its call is sent never sends it.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Sleep", arguments: [.uint32(10_000)])
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test func tenThousandCallsInARow() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let before = client.statistics
        for index in 0..<10_000 {
            let reply = try await client.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Echo", arguments: [.variant(.uint32(UInt32(index)))])
            #expect(reply.first?.uint32 == UInt32(index))
        }
        let after = client.statistics
        // Exactly one message each way per call.
        #expect(after.messagesSent - before.messagesSent == 10_000)
        #expect(after.messagesReceived - before.messagesReceived == 10_000)
    }

    @Test func aThousandConcurrentCallsStayUnderTheBusLimit() async throws {
        // The bus allows 128 pending replies per connection (as the system
        // bus does); the connection keeps its own calls below that.
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        try await EchoService.serve(on: server)

        let results = try await withThrowingTaskGroup(of: UInt32?.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    try await client.call(
                        destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                        method: "Sleep", arguments: [.uint32(UInt32(index % 7))]
                    ).first?.uint32
                }
            }
            var collected: [UInt32] = []
            for try await value in group { collected.append(value ?? .max) }
            return collected
        }
        #expect(results.count == 1_000)
        #expect(results.sorted() == (0..<1_000).map { UInt32($0 % 7) }.sorted())
    }
}

/// Calls a peer sends before its reply are handled before the caller sees
/// the reply, in the order they came (bluetoothd releases a refused monitor
/// before it answers RegisterMonitor; a central's writes come in order).
@Suite struct IncomingCallOrderTests {
    @Test func callsSentBeforeAReplyAreHandledBeforeItInOrder() async throws {
        let bus = try TestBus()
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { client.close(); server.close() }
        let noted = Mutex<[UInt32]>([])
        try client.objects.add(
            ExportedInterface(
                "org.example.Notes",
                methods: [
                    .init("Note", inputs: [.init("index", .uint32)]) { call in
                        noted.withLock { $0.append(call.arguments.first?.uint32 ?? .max) }
                        return []
                    }
                ]),
            at: "/org/example/notes")
        let count: UInt32 = 500
        try server.objects.add(
            ExportedInterface(
                "org.example.Burst",
                methods: [
                    .init("Burst") { call in
                        guard let caller = call.sender else { throw DBusError(.failed, "no sender") }
                        for index in 0..<count {
                            var note = Message.methodCall(
                                destination: caller, path: "/org/example/notes", interface: "org.example.Notes",
                                member: "Note", body: [.uint32(index)])
                            note.noReplyExpected = true
                            try server.send(note)
                        }
                        return []
                    }
                ]),
            at: "/org/example/burst")
        for round in 0..<5 {
            noted.withLock { $0.removeAll() }
            _ = try await client.call(
                destination: server.uniqueName, path: "/org/example/burst", interface: "org.example.Burst",
                method: "Burst")
            #expect(noted.withLock { $0 } == Array(0..<count), "round \(round)")
        }
    }
}
