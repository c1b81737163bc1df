import AsyncPrimitives
import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The agent's questions waiting for a client's answer: each one is
/// published as a `pairing-request` event with an id, answered by
/// `POST /v1/pairing-requests/{id}`, and rejected when nobody answers
/// within the deadline. Every outcome is an event of its own.
final class PairingRequests: Sendable {
    struct Pending: Sendable {
        let id: String
        let request: PairingRequest
        let expires: Date
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
        /// call can say why bluetoothd failed it.
        var refusals: [BluetoothAddress: Refusal] = [:]
    }

    private let state = Mutex(State())
    private let log: EventLog
    let deadline: Duration

    init(log: EventLog, deadline: Duration) {
        self.log = log
        self.deadline = deadline
    }

    /// The agent's handler: publishes the question and waits for its
    /// answer, the deadline (`.reject`) or bluetoothd's `Cancel` (`.cancel`).
    func handle(_ request: PairingRequest) async -> PairingAnswer {
        let expires = Date().addingTimeInterval(deadline.secondsValue)
        let pending = state.withLock { state -> Pending in
            defer { state.nextID += 1 }
            state.refusals[request.device] = nil
            let id = "pr-\(state.nextID)"
            let pending = Pending(id: id, request: request, expires: expires, answer: Promise())
            if !request.kind.isDisplayOnly { state.pending[id] = pending }
            return pending
        }
        publish("pairing-request", pending, [])
        if request.kind.isDisplayOnly { return .accept }
        let result = await pending.answer.wait(deadline: .now + deadline, timeout: .expired, cancelled: .cancelled)
        state.withLock { _ = $0.pending.removeValue(forKey: pending.id) }
        switch result {
        case .success(let answer):
            if answer == .reject { state.withLock { $0.refusals[request.device] = .rejectedByClient } }
            return answer
        case .failure(.expired):
            state.withLock { $0.refusals[request.device] = .unanswered }
            publish("pairing-request-expired", pending, [])
            return .reject
        case .failure(.cancelled):
            publish("pairing-request-cancelled", pending, [])
            return .cancel
        }
    }

    /// Why the gateway refused the last question about `device`, if it
    /// did (and forgets it).
    func takeRefusal(_ device: BluetoothAddress) -> Refusal? {
        state.withLock { $0.refusals.removeValue(forKey: device) }
    }

    /// The questions waiting for an answer.
    var all: [Pending] { state.withLock { Array($0.pending.values) }.sorted { $0.expires < $1.expires } }

    /// A client's answer to question `id`; throws a 404 for an unknown (or
    /// already settled) id, and a 400 for an answer that does not fit the
    /// question.
    func answer(_ id: String, with answer: PairingAnswer) throws(Problem) {
        let found = state.withLock { state -> (Pending, fits: Bool)? in
            guard let pending = state.pending[id] else { return nil }
            guard Self.fits(answer, pending.request.kind) else { return (pending, false) }
            // Resolved and unlisted in one step: a question that expired
            // or was cancelled meanwhile is no longer answerable.
            guard pending.answer.resolve(.success(answer)) else { return nil }
            state.pending[id] = nil
            return (pending, true)
        }
        guard let (pending, fits) = found else {
            throw Problem(.notFound, status: .notFound, detail: "no pairing request \(id) is waiting for an answer")
        }
        guard fits else {
            throw Problem.invalidParameter(
                Self.expectedField(pending.request.kind), "is the answer a \(pending.request.kind.name) request needs")
        }
        publish(
            "pairing-request-answered", pending,
            [("accepted", .bool(answer != .reject && answer != .cancel))])
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

    private func publish(_ type: String, _ pending: Pending, _ extra: [(String, JSON)]) {
        log.publish(type: type, device: pending.request.device.description, json: Self.json(pending, type: type, extra))
    }

    /// The JSON of a question (its events, and `GET /v1/pairing-requests`).
    static func json(_ pending: Pending, type: String? = nil, _ extra: [(String, JSON)] = []) -> JSON {
        var members: [(String, JSON)] = []
        if let type { members += [("type", .string(type)), ("timestamp", ModelJSON.timestamp(Date()))] }
        members += [
            ("id", .string(pending.id)), ("kind", .string(pending.request.kind.name)),
            ("adapter", .string(pending.request.adapter)), ("address", .string(pending.request.device.description)),
        ]
        switch pending.request.kind {
        case .confirmation(let passkey), .displayPasskey(let passkey, _):
            members.append(("passkey", .string(Self.sixDigits(passkey))))
        case .displayPinCode(let pin):
            members.append(("pin", .string(pin)))
        case .serviceAuthorization(let uuid):
            members.append(("service", .string(uuid)))
        default: break
        }
        if case .displayPasskey(_, let entered) = pending.request.kind { members.append(("entered", .int(Int(entered)))) }
        if !pending.request.kind.isDisplayOnly { members.append(("expires", ModelJSON.timestamp(pending.expires))) }
        return .object(members + extra)
    }

    /// A passkey as people read it: six digits, leading zeros kept.
    static func sixDigits(_ passkey: UInt32) -> String {
        let digits = String(passkey % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}
