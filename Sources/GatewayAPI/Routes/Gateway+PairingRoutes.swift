import BlueZ
import GatewayCore
import HTTPServer

extension Gateway {
    func addPairingRoutes(to router: inout Router) {
        router.post("/v1/devices/{address}/pair") { [self] request in
            let command = PairCommand(
                device: try commandTarget(request), timeout: try request.timeout(maximum: configuration.maximumTimeout))
            return .json(ModelJSON.device(try await core.pair(command), encoding: .hex))
        }
        router.delete("/v1/devices/{address}/pair") { [self] request in
            let command = UnpairCommand(
                device: try commandTarget(request), timeout: try request.timeout(maximum: configuration.maximumTimeout))
            try await core.unpair(command)
            return Response(status: .noContent)
        }
        router.patch("/v1/devices/{address}") { [self] request in
            let device = try commandTarget(request)
            let body = try JSONBody(request, allowed: ["trusted", "blocked"])
            let command = ChangeDeviceSettingsCommand(
                device: device, trusted: try body["trusted"].bool(), blocked: try body["blocked"].bool(),
                timeout: try request.timeout(maximum: configuration.maximumTimeout))
            return .json(ModelJSON.device(try await core.changeDeviceSettings(command), encoding: .hex))
        }
        router.get("/v1/pairing-requests") { [self] _ in
            .json(.array(core.pendingPairingRequests.map { PairingJSON.request($0) }))
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
            try core.answerPairingRequest(AnswerPairingRequestCommand(id: id, answer: answer))
            return Response(status: .noContent)
        }
    }
}
