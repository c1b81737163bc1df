import BlueZ
import GatewayCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPServer

/// The JSON of pairing: the agent's questions (their events and
/// `GET /v1/pairing-requests`) and the events of pairing a device.
enum PairingJSON {
    /// An event's JSON, stamped `date`.
    static func event(_ event: PairingEvent, at date: Date) -> JSON {
        let type = event.type
        switch event {
        case .requested(let question), .expired(let question), .cancelled(let question):
            return request(question, type: type, at: date)
        case .answered(let question, let accepted):
            return request(question, type: type, at: date, [("accepted", .bool(accepted))])
        case .succeeded(let device):
            return deviceEvent(
                type, device.adapter, device.address, at: date,
                [("paired", .bool(device.paired)), ("bonded", .bool(device.bonded))])
        case .failed(let adapter, let address, let error):
            let problem = Problem(error)
            var members: [(String, JSON)] = [("problem", .string(problem.type)), ("detail", .string(problem.detail))]
            if let name = problem.dbusError { members.append(("dbus_error", .string(name))) }
            return deviceEvent(type, adapter, address, at: date, members)
        case .unpaired(let adapter, let address):
            return deviceEvent(type, adapter, address, at: date, [])
        }
    }

    /// The JSON of a question: as listed, or (with `type`) as its event.
    static func request(
        _ question: PendingPairingRequest, type: String? = nil, at date: Date = Date(), _ extra: [(String, JSON)] = []
    ) -> JSON {
        var members: [(String, JSON)] = []
        if let type { members += [("type", .string(type)), ("timestamp", ModelJSON.timestamp(date))] }
        members += [
            ("id", .string(question.id)), ("kind", .string(question.request.kind.name)),
            ("adapter", .string(question.request.adapter)), ("address", .string(question.request.device.description)),
        ]
        switch question.request.kind {
        case .confirmation(let passkey), .displayPasskey(let passkey, _):
            members.append(("passkey", .string(sixDigits(passkey))))
        case .displayPinCode(let pin):
            members.append(("pin", .string(pin)))
        case .serviceAuthorization(let uuid):
            members.append(("service", .string(uuid)))
        default: break
        }
        if case .displayPasskey(_, let entered) = question.request.kind { members.append(("entered", .int(Int(entered)))) }
        if !question.request.kind.isDisplayOnly { members.append(("expires", ModelJSON.timestamp(question.expires))) }
        return .object(members + extra)
    }

    /// A passkey as people read it: six digits, leading zeros kept.
    static func sixDigits(_ passkey: UInt32) -> String {
        let digits = String(passkey % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    private static func deviceEvent(
        _ type: String, _ adapter: String, _ address: BluetoothAddress, at date: Date, _ extra: [(String, JSON)]
    ) -> JSON {
        .object(
            [
                ("type", .string(type)), ("timestamp", ModelJSON.timestamp(date)), ("adapter", .string(adapter)),
                ("address", .string(address.description)),
            ] + extra)
    }
}
