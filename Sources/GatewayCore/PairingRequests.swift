import AsyncPrimitives
import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The agent's questions waiting for a client's answer: each one is
/// published (`PairingEvent.requested`) with an id, answered by
/// `answer(_:with:)`, and rejected when nobody answers within the deadline.
/// Every outcome is an event of its own.
public final class PairingRequests: Sendable {
    /// A question and the promise its answer resolves.
    struct Pending: Sendable {
        let question: PendingPairingRequest
        let answer: Promise<PairingAnswer, Unanswered>
    }

    /// Why the gateway's agent said no.
    enum Refusal: Sendable {
        case rejectedByClient, unanswered
    }

    /// Why a question got no client's answer.
    enum Unanswered: Error {
        case expired, cancelled
    }

    private struct State {
        var pending: [String: Pending] = [:]
        var nextID: UInt64 = 1
        /// Devices whose last question was refused by the gateway (a
        /// client said no, or nobody answered in time), so that the pair
        /// command can say why bluetoothd failed it.
        var refusals: [BluetoothAddress: Refusal] = [:]
    }

    private let state = Mutex(State())
    private let publish: @Sendable (PairingEvent) -> Void
    /// How long a question waits for an answer.
    public let deadline: Duration

    init(deadline: Duration, publish: @escaping @Sendable (PairingEvent) -> Void) {
        self.deadline = deadline
        self.publish = publish
    }

    /// The agent's handler: publishes the question and waits for its
    /// answer, the deadline (`.reject`) or bluetoothd's `Cancel` (`.cancel`).
    public func handle(_ request: PairingRequest) async -> PairingAnswer {
        let expires = Date().addingTimeInterval(deadline.secondsValue)
        let pending = state.withLock { state -> Pending in
            defer { state.nextID += 1 }
            state.refusals[request.device] = nil
            let question = PendingPairingRequest(id: "pr-\(state.nextID)", request: request, expires: expires)
            let pending = Pending(question: question, answer: Promise())
            if !request.kind.isDisplayOnly { state.pending[question.id] = pending }
            return pending
        }
        let question = pending.question
        publish(.requested(question))
        if request.kind.isDisplayOnly { return .accept }
        let result = await pending.answer.wait(deadline: .now + deadline, timeout: .expired, cancelled: .cancelled)
        state.withLock { _ = $0.pending.removeValue(forKey: question.id) }
        switch result {
        case .success(let answer):
            if answer == .reject { state.withLock { $0.refusals[request.device] = .rejectedByClient } }
            return answer
        case .failure(.expired):
            state.withLock { $0.refusals[request.device] = .unanswered }
            publish(.expired(question))
            return .reject
        case .failure(.cancelled):
            publish(.cancelled(question))
            return .cancel
        }
    }

    /// Why the gateway refused the last question about `device`, if it
    /// did (and forgets it).
    func takeRefusal(_ device: BluetoothAddress) -> Refusal? {
        state.withLock { $0.refusals.removeValue(forKey: device) }
    }

    /// The questions waiting for an answer, the first to expire first.
    public var all: [PendingPairingRequest] {
        state.withLock { $0.pending.values.map(\.question) }.sorted { $0.expires < $1.expires }
    }

    /// A client's answer to question `id`; `notFound` for an unknown (or
    /// already settled) id, `invalidParameter` for an answer that does not
    /// fit the question (naming the field that does: `passkey`, `pin`,
    /// `confirm`).
    public func answer(_ id: String, with answer: PairingAnswer) throws(GatewayCommandError) {
        let found = state.withLock { state -> (PendingPairingRequest, fits: Bool)? in
            guard let pending = state.pending[id] else { return nil }
            guard Self.fits(answer, pending.question.request.kind) else { return (pending.question, false) }
            // Resolved and unlisted in one step: a question that expired
            // or was cancelled meanwhile is no longer answerable.
            guard pending.answer.resolve(.success(answer)) else { return nil }
            state.pending[id] = nil
            return (pending.question, true)
        }
        guard let (question, fits) = found else { throw .notFound("no pairing request \(id) is waiting for an answer") }
        guard fits else {
            throw .invalidParameter(
                name: Self.expectedField(question.request.kind),
                reason: "is the answer a \(question.request.kind.name) request needs")
        }
        publish(.answered(question, accepted: answer != .reject && answer != .cancel))
    }

    static func fits(_ answer: PairingAnswer, _ kind: PairingRequest.Kind) -> Bool {
        switch (answer, kind) {
        case (.reject, _), (.cancel, _): true
        case (.pinCode, .pinCode), (.passkey, .passkey): true
        case (.accept, .confirmation), (.accept, .authorization), (.accept, .serviceAuthorization): true
        default: false
        }
    }

    static func expectedField(_ kind: PairingRequest.Kind) -> String {
        switch kind {
        case .pinCode: "pin"
        case .passkey: "passkey"
        default: "confirm"
        }
    }
}
