import BlueZ
import GatewayCore
import HTTPServer
import PersistedState

extension Gateway {
    func addSubscriptionRoutes(to router: inout Router) {
        // Stored before the answer: the store has committed it. An
        // identical subscription (same device, adapter, characteristic,
        // service and mode) is answered with the existing one: 200, not 201.
        router.post("/v1/subscriptions") { [self] request in
            let body = try JSONBody(request, allowed: ["device", "characteristic", "service", "mode", "adapter"])
            guard let deviceText = try body["device"].string() else { throw Problem.invalidParameter("device", "is required") }
            let address = try Request.bluetoothAddress(deviceText, parameter: "device")
            guard let characteristicText = try body["characteristic"].string(maxLength: 64) else {
                throw Problem.invalidParameter("characteristic", "is required (a UUID, or handle:N)")
            }
            let service = try body["service"].string(maxLength: 64).map { (text) throws(Problem) in
                try Request.uuid(text, parameter: "service")
            }
            let selector = try Request.attribute(characteristicText, parameter: "characteristic", service: service)
            let modeText = try body["mode"].string() ?? "notify"
            guard let mode = StandingSubscription.Mode(rawValue: modeText) else {
                throw Problem.invalidParameter("mode", "must be notify or indicate, not '\(modeText)'")
            }
            let adapter = try body["adapter"].string().map { (name) throws(Problem) in
                try Request.checkAdapterName(name, parameter: "adapter")
                return name
            }
            let command = CreateSubscriptionCommand(
                characteristic: CharacteristicTarget(device: DeviceTarget(address: address, adapter: adapter), selector: selector),
                mode: mode)
            switch try await core.createSubscription(command, owner: client(request).rawValue) {
            case .existing(let existing):
                var response = Response.json(Self.subscriptionJSON(existing))
                response.headers["Content-Location"] = "/v1/subscriptions/\(existing.subscription.id)"
                return response
            case .created(let subscription, let entry):
                var response = Response.json(Self.subscriptionJSON(entry), status: .created)
                response.headers["Location"] = "/v1/subscriptions/\(subscription.id)"
                return response
            }
        }
        router.get("/v1/subscriptions") { [self] _ in
            .json(.array(standing.entries.map(Self.subscriptionJSON)))
        }
        router.get("/v1/subscriptions/{id}") { [self] request in
            let id = try subscriptionID(request)
            guard let entry = standing.entry(id) else {
                throw Problem(.notFound, status: .notFound, detail: "there is no standing subscription \(id)")
            }
            return .json(Self.subscriptionJSON(entry))
        }
        router.delete("/v1/subscriptions/{id}") { [self] request in
            let id = try subscriptionID(request)
            try await core.removeSubscription(RemoveSubscriptionCommand(id: id))
            return Response(status: .noContent)
        }
    }

    private func subscriptionID(_ request: Request) throws(Problem) -> Int64 {
        let text = request.pathParameter("id")
        guard let id = Int64(text), id > 0 else { throw Problem.invalidParameter("id", "'\(text)' is not a subscription id") }
        return id
    }

    static func subscriptionJSON(_ entry: StandingSubscriptions.Entry) -> JSON {
        let subscription = entry.subscription
        let characteristic: String
        switch subscription.characteristic {
        case .uuid(let uuid): characteristic = uuid
        case .handle(let handle): characteristic = "handle:\(handle)"
        }
        var members: [(String, JSON)] = [
            ("id", .int(Int(subscription.id))), ("adapter", .string(subscription.adapter)),
            ("device", .string(subscription.address)), ("characteristic", .string(characteristic)),
        ]
        if let service = subscription.service { members.append(("service", .string(service))) }
        members += [("mode", .string(subscription.mode.rawValue)), ("status", .string(entry.status.rawValue))]
        if let reason = entry.lastReason { members.append(("last_reason", .string(reason))) }
        return .object(members)
    }
}
