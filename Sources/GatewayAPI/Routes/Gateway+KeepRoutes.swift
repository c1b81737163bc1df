import BlueZ
import GatewayCore
import HTTPServer
import PersistedState

extension Gateway {
    func addKeepRoutes(to router: inout Router) {
        // Keeping is durable before the answer: the store has committed it.
        router.put("/v1/devices/{address}/keep") { [self] request in
            let device = try commandTarget(request)
            let body = try JSONBody(request, allowed: Self.keepFields, optional: true)
            let command = try Self.keepCommand(device, reading: body.root)
            let (status, json) = CommandJSON.keep(try await core.keep(command, owner: client(request).rawValue))
            return .json(json, status: Status(status))
        }
        router.get("/v1/devices/{address}/keep") { [self] request in
            .json(CommandJSON.kept(try core.keepStatus(KeepStatusCommand(device: try commandTarget(request)))))
        }
        router.delete("/v1/devices/{address}/keep") { [self] request in
            let device = try commandTarget(request)
            try await core.unkeep(UnkeepCommand(device: device, fleet: try Self.fleetQuery(request)))
            return Response(status: .noContent)
        }
        router.get("/v1/kept-connections") { [self] _ in
            .json(.array(keeper.keptDevices().map(CommandJSON.kept)))
        }
    }

    /// A keep command for `device` from the fields of a JSON object (a keep
    /// request's body, an MQTT keep command): `max_attempts` and `label`,
    /// and with `"fleet": true` the fleet's `pin`, `prefer` and
    /// `subscriptions`.
    public static func keepCommand(_ device: DeviceTarget, reading body: JSONField) throws(Problem) -> KeepCommand {
        let maxAttempts = try body["max_attempts"].int(in: 1...1_000_000)
        let label = try body["label"].string(maxLength: 128)
        if let wish = try fleetKeep(device.address, body) { return KeepCommand(device: device, placement: .fleet(wish)) }
        return KeepCommand(device: device, placement: .thisGateway(maxAttempts: maxAttempts, label: label))
    }

    /// The owner a caller in this process (the MQTT bridge) keeps devices
    /// as: the API key's holder, or `local`.
    public var inProcessOwner: String { ClientID.inProcess(apiKey: configuration.apiKey).rawValue }

    /// `GatewayCore.keptAdapter`, for the routes.
    func keptAdapter(_ address: BluetoothAddress, _ requested: String?) throws(Problem) -> String {
        do {
            return try core.keptAdapter(address, requested)
        } catch {
            throw Problem(error)
        }
    }

    /// `GatewayCore.keepAdapter`, for the routes.
    func keepAdapter(_ requested: String?) throws(Problem) -> String {
        do {
            return try core.keepAdapter(requested)
        } catch {
            throw Problem(error)
        }
    }

    /// A change the store could not save: a 500 (507 when the disk is
    /// full) that says why, with nothing changed.
    static func storeProblem(_ error: StoreError) -> Problem {
        Problem(GatewayCommandError.stateStore(StateStoreFailure(error)))
    }
}
