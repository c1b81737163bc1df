import DBus
import Synchronization
import TestSupport
import Testing

@Suite struct SignalHandlerTests {
    static let tick = MatchRule(interface: EchoService.interfaceName, member: "Tick")

    @Test func signalsBeforeAReplyAreHandledWhenTheCallReturns() async throws {
        let bus = try TestBus()
        let emitter = try await bus.connect()
        let listener = try await bus.connect()
        defer { listener.close(); emitter.close() }
        try await EchoService.serve(on: emitter)

        let seen = Mutex<[UInt32]>([])
        let subscription = try await listener.addSignalHandler(matching: Self.tick) { message in
            seen.withLock { $0.append(message.body.first?.uint32 ?? .max) }
        }
        defer { subscription.cancel() }
        for round in 0..<20 {
            let base = UInt32(round * 50)
            for count in base..<(base + 50) {
                try emitter.emitSignal(
                    path: EchoService.path, interface: EchoService.interfaceName, member: "Tick",
                    arguments: [.uint32(count)])
            }
            // The emitter's reply leaves after its signals; when the call
            // returns, every one of them has been handled, with no waiting.
            _ = try await listener.call(
                destination: EchoService.name, path: EchoService.path, interface: EchoService.interfaceName,
                method: "Upper", arguments: [.string("x")])
            #expect(seen.withLock { $0 } == Array(0..<(base + 50)))
        }
    }

    @Test func cancellingRemovesTheRuleAndClosingEndsTheHandler() async throws {
        let bus = try TestBus()
        let listener = try await bus.connect()
        let observer = try await bus.connect()
        defer { observer.close() }
        let baseline = try await bus.matchRules(of: listener, asking: observer)
        let subscription = try await listener.addSignalHandler(matching: Self.tick) { _ in }
        #expect(try await bus.matchRules(of: listener, asking: observer) == baseline + 1)
        subscription.cancel()
        subscription.cancel()
        var rules = try await bus.matchRules(of: listener, asking: observer)
        for _ in 0..<100 where rules != baseline {
            try await Task.sleep(for: .milliseconds(20))
            rules = try await bus.matchRules(of: listener, asking: observer)
        }
        #expect(rules == baseline)

        let ended = Mutex<DBusError?>(nil)
        _ = try await listener.addSignalHandler(matching: Self.tick, ended: { error in ended.withLock { $0 = error } }) { _ in }
        listener.close()
        #expect(ended.withLock { $0 }?.isDisconnected == true)
    }
}
