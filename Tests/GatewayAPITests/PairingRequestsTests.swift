import BlueZ
import HTTPServer
import Testing

@testable import GatewayAPI
@testable import GatewayCore

/// The questions of the agent as the core keeps them and the API publishes
/// them: published, answered once, expired or cancelled, each outcome an
/// event of the event log.
@Suite struct PairingRequestsTests {
    static let device = BluetoothAddress(rawValue: 0xD073_D522_419C).unsafelyUnwrapped

    func events(_ writer: StreamWriter) -> [String] {
        writer.queuedText().components(separatedBy: "\n\n").filter { !$0.isEmpty }.compactMap { frame in
            frame.split(separator: "\n").first { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
        }
    }

    func setUp(deadline: Duration) -> (PairingRequests, StreamWriter) {
        let log = EventLog(capacity: 64, encoding: JSONEventEncoding.gateway)
        let writer = StreamWriter()
        log.subscribe(writer, id: log.makeSubscriberID(), filter: EventFilter())
        let publisher = CoreEventOutlet(log: log, observer: OutcomeCounters())
        return (PairingRequests(deadline: deadline) { publisher.publish(.pairing($0)) }, writer)
    }

    /// Waits (generously) for the question to be listed.
    func pending(_ requests: PairingRequests) async throws -> PendingPairingRequest {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let first = requests.all.first { return first }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw CancellationError()
    }

    @Test func anAnswerReachesTheAgentOnce() async throws {
        let (requests, writer) = setUp(deadline: .seconds(60))
        let question = Task {
            await requests.handle(PairingRequest(adapter: "hci0", device: Self.device, kind: .passkey))
        }
        let pending = try await pending(requests)
        #expect(throws: GatewayCommandError.self) { try requests.answer(pending.id, with: .accept) }  // the wrong kind
        try requests.answer(pending.id, with: .passkey(123_456))
        #expect(await question.value == .passkey(123_456))
        #expect(throws: GatewayCommandError.self) { try requests.answer(pending.id, with: .passkey(1)) }  // settled
        #expect(requests.all.isEmpty)
        #expect(requests.takeRefusal(Self.device) == nil)
        #expect(events(writer) == ["pairing-request", "pairing-request-answered"])
    }

    @Test func anUnansweredQuestionIsRejectedAtItsDeadline() async {
        let (requests, writer) = setUp(deadline: .milliseconds(50))
        let answer = await requests.handle(PairingRequest(adapter: "hci0", device: Self.device, kind: .confirmation(7)))
        #expect(answer == .reject)
        #expect(requests.takeRefusal(Self.device) == .unanswered)
        #expect(events(writer) == ["pairing-request", "pairing-request-expired"])
    }

    @Test func bluetoothdsCancelCancelsTheQuestion() async throws {
        let (requests, writer) = setUp(deadline: .seconds(60))
        let question = Task {
            await requests.handle(PairingRequest(adapter: "hci0", device: Self.device, kind: .authorization))
        }
        _ = try await pending(requests)
        question.cancel()
        #expect(await question.value == .cancel)
        #expect(requests.all.isEmpty)
        #expect(events(writer) == ["pairing-request", "pairing-request-cancelled"])
    }

    @Test func aClientsNoIsRemembered() async throws {
        let (requests, _) = setUp(deadline: .seconds(60))
        let question = Task {
            await requests.handle(PairingRequest(adapter: "hci0", device: Self.device, kind: .confirmation(1)))
        }
        try requests.answer(try await pending(requests).id, with: .reject)
        #expect(await question.value == .reject)
        #expect(requests.takeRefusal(Self.device) == .rejectedByClient)
    }

    @Test func displayRequestsArePublishedAndNeedNoAnswer() async {
        let (requests, writer) = setUp(deadline: .seconds(60))
        let answer = await requests.handle(
            PairingRequest(adapter: "hci0", device: Self.device, kind: .displayPasskey(42, entered: 0)))
        #expect(answer == .accept)
        #expect(requests.all.isEmpty)
        #expect(events(writer) == ["pairing-request"])
        #expect(writer.queuedText().contains(#""passkey":"000042""#))
    }
}
