import TestSupport
import Testing
@testable import DBus

/// Calls sent back to back (`callsInOrder`), which a subscription uses to
/// follow a well-known sender in one round trip (SignalTests has the
/// sender's owner found before and after subscribing).
@Suite struct PipelinedCallTests {
    @Test func eachCallSeesWhatTheCallsBeforeItDid() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        defer { connection.close() }
        let name = "org.example.Pipelined"
        let replies = await connection.callsInOrder([
            Connection.busCall("GetNameOwner", [.string(name)]),
            Connection.busCall("RequestName", [.string(name), .uint32(4)]),
            Connection.busCall("GetNameOwner", [.string(name)]),
            Connection.busCall("NoSuchMethod", []),
            Connection.busCall("ListNames", []),
        ])
        #expect(replies.count == 5)
        #expect((replies[0].failure as? DBusError)?.name == .nameHasNoOwner)
        #expect(try replies[1].get().body == [.uint32(1)])
        #expect(try replies[2].get().body == [.string(connection.uniqueName.rawValue)])
        #expect((replies[3].failure as? DBusError)?.name == .unknownMethod)
        #expect(try replies[4].get().body.first?.strings?.contains(name) == true)
    }

    @Test func aClosedConnectionFailsEveryCall() async throws {
        let bus = try TestBus()
        let connection = try await bus.connect()
        connection.close()
        let replies = await connection.callsInOrder([
            Connection.busCall("ListNames", []), Connection.busCall("ListNames", []),
        ])
        #expect(replies.count == 2)
        for reply in replies { #expect((reply.failure as? DBusError)?.name == .disconnected) }
    }

    @Test func onlyTheBusSpeaksForTheBus() async throws {
        let bus = try TestBus()
        let listener = try await bus.connect()
        let impostor = try await bus.connect()
        let observer = try await bus.connect()
        defer { observer.close(); impostor.close(); listener.close() }
        let name = "org.example.Watched"
        let rule = MatchRule(
            sender: .bus, interface: .bus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
            arguments: [0: name])
        let baseline = try await bus.matchRules(of: listener, asking: observer)
        let stream = try await listener.signals(matching: rule)
        // The bus's own name needs no following: one rule, no lookup.
        #expect(try await bus.matchRules(of: listener, asking: observer) == baseline + 1)
        // A peer's signal made to look like the bus's, sent straight to the
        // listener (no match rule stops it), is not delivered.
        try impostor.emitSignal(
            path: "/org/freedesktop/DBus", interface: .bus, member: "NameOwnerChanged",
            arguments: [.string(name), .string(""), .string(impostor.uniqueName.rawValue)],
            destination: listener.uniqueName)
        _ = try await impostor.requestName(BusName(unchecked: name))
        var iterator = stream.makeAsyncIterator()
        let change = try await iterator.next()
        #expect(change?.sender == .bus)
        #expect(change?.body == [.string(name), .string(""), .string(impostor.uniqueName.rawValue)])
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
