import BlueZ
import GatewayCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPServer

extension Gateway {
    /// The events of pairing (published on `GET /v1/events`).
    static let pairingEventTypes: Set<String> = [
        "pairing-request", "pairing-request-answered", "pairing-request-expired", "pairing-request-cancelled",
        "pairing-succeeded", "pairing-failed", "device-unpaired",
    ]

    /// The handler of the gateway's `PairingAgent`: every question becomes
    /// a `pairing-request` event that a client answers with
    /// `POST /v1/pairing-requests/{id}`, or that is rejected after
    /// `configuration.pairingRequestTimeout`.
    public func answerPairing(_ request: PairingRequest) async -> PairingAnswer {
        await pairingRequests.handle(request)
    }

    func addPairingRoutes(to router: inout Router) {
        router.post("/v1/devices/{address}/pair") { [self] request in
            let (address, adapter) = try deviceTarget(request)
            let timeout = try request.timeout(maximum: configuration.maximumTimeout) ?? configuration.defaultTimeout
            let device = try await pair(address, adapter: adapter, timeout: timeout)
            return .json(ModelJSON.device(device, encoding: .hex))
        }
        router.delete("/v1/devices/{address}/pair") { [self] request in
            let (address, adapter) = try deviceTarget(request)
            let timeout = try request.timeout(maximum: configuration.maximumTimeout)
            let device = try central.device(address, adapter: adapter)
            // bluetoothd keeps no bond without its device object: removing
            // the device is how a bond is forgotten (it comes back, unpaired,
            // when it is heard again).
            try await central.remove(address, adapter: adapter, timeout: timeout)
            log.publish(
                type: "device-unpaired", device: address.description,
                json: Self.pairingEvent("device-unpaired", device.adapter, address, []))
            return Response(status: .noContent)
        }
        router.patch("/v1/devices/{address}") { [self] request in
            let (address, adapter) = try deviceTarget(request)
            let body = try JSONBody(request, allowed: ["trusted", "blocked"])
            let trusted = try body["trusted"].bool()
            let blocked = try body["blocked"].bool()
            let timeout = try request.timeout(maximum: configuration.maximumTimeout)
            let device = try await central.setDeviceFlags(
                address, adapter: adapter, trusted: trusted, blocked: blocked, timeout: timeout)
            return .json(ModelJSON.device(device, encoding: .hex))
        }
        router.get("/v1/pairing-requests") { [self] _ in
            .json(.array(pairingRequests.all.map { PairingRequests.json($0) }))
        }
        router.post("/v1/pairing-requests/{id}") { [self] request in
            let id = request.pathParameter("id")
            let body = try JSONBody(request, allowed: ["passkey", "pin", "confirm"])
            guard try body.root.members().count <= 1 else {
                throw Problem(.invalidRequest, status: .badRequest, detail: "give one answer: passkey, pin or confirm")
            }
            let answer: PairingAnswer
            if let passkey = try body["passkey"].int(in: 0...999_999) {
                answer = .passkey(UInt32(passkey))
            } else if let pin = try body["pin"].string(maxLength: 16) {
                guard !pin.isEmpty else { throw Problem.invalidParameter("pin", "must be 1 to 16 characters") }
                answer = .pinCode(pin)
            } else if let confirm = try body["confirm"].bool() {
                answer = confirm ? .accept : .reject
            } else {
                throw Problem(
                    .invalidRequest, status: .badRequest,
                    detail: "answer with {\"passkey\": 123456}, {\"pin\": \"0000\"} or {\"confirm\": true|false}")
            }
            try pairingRequests.answer(id, with: answer)
            return Response(status: .noContent)
        }
    }

    /// Pairs, publishing the outcome (`pairing-succeeded`/`pairing-failed`);
    /// a refusal after an unanswered question says so.
    func pair(_ address: BluetoothAddress, adapter: String?, timeout: Duration) async throws(Problem) -> Device {
        // Only this pairing's refusals explain its failure.
        _ = pairingRequests.takeRefusal(address)
        if let known = try? central.device(address, adapter: adapter) { pairingWatch.gatewayPairs(address, adapter: known.adapter) }
        do {
            let device = try await central.pair(address, adapter: adapter, timeout: timeout)
            pairingWatch.gatewayPaired(device)
            outcomeCounters.countPairing(succeeded: true)
            log.publish(
                type: "pairing-succeeded", device: address.description,
                json: Self.pairingEvent(
                    "pairing-succeeded", device.adapter, address,
                    [("paired", .bool(device.paired)), ("bonded", .bool(device.bonded))]))
            return device
        } catch {
            if let now = try? central.device(address, adapter: adapter) { pairingWatch.gatewayPaired(now) }
            outcomeCounters.countPairing(succeeded: false)
            var problem = Problem(error)
            // bluetoothd reports the agent's "no" as the kernel does, as a
            // failed authentication: the gateway knows better.
            if [.pairingRejected, .authenticationFailed, .pairingCancelled].contains(error.code),
                let refusal = pairingRequests.takeRefusal(address)
            {
                let detail =
                    switch refusal {
                    case .rejectedByClient: "the pairing request was rejected (POST /v1/pairing-requests/{id})"
                    case .unanswered:
                        "nobody answered the pairing request within \(pairingRequests.deadline) (POST /v1/pairing-requests/{id})"
                    }
                problem = Problem(.pairingRejected, status: .forbidden, detail: detail, dbusError: error.dbusName)
            }
            let adapterName = (try? central.device(address, adapter: adapter).adapter) ?? adapter ?? ""
            var members: [(String, JSON)] = [("problem", .string(problem.type)), ("detail", .string(problem.detail))]
            if let name = problem.dbusError { members.append(("dbus_error", .string(name))) }
            let event = Self.pairingEvent("pairing-failed", adapterName, address, members)
            log.publish(type: "pairing-failed", device: address.description, json: event)
            throw problem
        }
    }

    /// bluetoothd paired `device` on its own (see `PairingWatch`).
    func publishPairedByBluetoothd(_ device: Device) {
        outcomeCounters.countPairing(succeeded: true)
        log.publish(
            type: "pairing-succeeded", device: device.address.description,
            json: Self.pairingEvent(
                "pairing-succeeded", device.adapter, device.address,
                [("paired", .bool(device.paired)), ("bonded", .bool(device.bonded))]))
    }

    static func pairingEvent(_ type: String, _ adapter: String, _ address: BluetoothAddress, _ extra: [(String, JSON)])
        -> JSON
    {
        .object(
            [
                ("type", .string(type)), ("timestamp", ModelJSON.timestamp(Date())), ("adapter", .string(adapter)),
                ("address", .string(address.description)),
            ] + extra)
    }

    /// Runs a GATT operation; with `?pair=auto`, an operation refused for
    /// want of pairing pairs (the agent's capability decides the method:
    /// Just Works with the default NoInputNoOutput) and runs once more.
    func withAutoPairing<T>(
        _ request: Request, _ device: DeviceTarget, timeout: Duration?,
        _ operation: () async throws(GatewayCommandError) -> T
    ) async throws -> T {
        let auto: Bool
        switch request.query["pair"] {
        case nil: auto = false
        case "auto"?: auto = true
        case let other?: throw Problem.invalidParameter("pair", "'\(other)' is not a pairing mode (auto)")
        }
        let first: Result<T, GatewayCommandError>
        do {
            first = .success(try await operation())
        } catch {
            first = .failure(error)
        }
        guard auto, case .failure(.bluez(let error)) = first, error.code == .notPaired else { return try first.get() }
        _ = try await pair(device.address, adapter: device.adapter, timeout: timeout ?? configuration.defaultTimeout)
        return try await operation()
    }
}
