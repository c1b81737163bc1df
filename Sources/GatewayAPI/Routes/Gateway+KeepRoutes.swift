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
            let (status, json) = CommandJSON.keep(try await keep(command, owner: client(request)))
            return .json(json, status: Status(status))
        }
        router.get("/v1/devices/{address}/keep") { [self] request in
            .json(CommandJSON.kept(try core.keepStatus(KeepStatusCommand(device: try commandTarget(request)))))
        }
        router.delete("/v1/devices/{address}/keep") { [self] request in
            let device = try commandTarget(request)
            try await unkeep(UnkeepCommand(device: device, fleet: try Self.fleetQuery(request)))
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

    /// Runs a keep command for a caller in this process (the MQTT bridge),
    /// whose kept devices count against the API key's holder, or `local`.
    public func keep(_ command: KeepCommand) async throws(Problem) -> KeepOutcome {
        try await keep(command, owner: ClientID.inProcess(apiKey: configuration.apiKey))
    }

    /// Keeps the device on this gateway (stored first, counted against
    /// `owner`'s quota) or publishes the fleet's wish.
    func keep(_ command: KeepCommand, owner client: ClientID) async throws(Problem) -> KeepOutcome {
        let (maxAttempts, label): (Int?, String?)
        switch command.placement {
        case .fleet(let wish):
            try await keepByFleet(wish)
            return .keptByFleet(wish)
        case .thisGateway(let attempts, let text): (maxAttempts, label) = (attempts, text)
        }
        let address = command.device.address
        let adapter = try keptAdapter(address, core.adapter(of: command.device))
        let key = Self.keptKey(adapter, address)
        // Changing a kept device's options takes no new place.
        let slot = quotas.holds(.keptDevice, key: key) ? nil : try quotas.reserve(.keptDevice, for: client)
        if let store {
            var members: [(String, JSON)] = maxAttempts.map { [("max_attempts", .int($0))] } ?? []
            if let label { members.append(("label", .string(label))) }
            let options = JSON.object(members)
            var bytes: [UInt8] = []
            options.write(to: &bytes)
            do throws(StoreError) {
                _ = try await store.keep(
                    KeptConnection(adapter: adapter, address: address.description, options: bytes, owner: client.rawValue))
            } catch {
                if let slot { quotas.cancel(slot) }
                throw Self.storeProblem(error)
            }
        }
        let isNew = keeper.keep(address, adapter: adapter, maxAttempts: maxAttempts, label: label)
        if let slot { quotas.assign(slot, key: key) }
        return .kept(keeper.keptDevice(address, adapter: adapter), isNew: isNew)
    }

    /// Stops keeping the device on this gateway (removed from the store
    /// first), or clears the fleet's wish; a 404 when it was not kept.
    public func unkeep(_ command: UnkeepCommand) async throws(Problem) {
        let address = command.device.address
        if command.fleet { return try await unkeepByFleet(address) }
        let adapter = try keptAdapter(address, core.adapter(of: command.device))
        var removed = false
        if let store {
            do throws(StoreError) {
                removed = try await store.removeKeptConnection(adapter: adapter, address: address.description)
            } catch {
                throw Self.storeProblem(error)
            }
        }
        if keeper.release(address, adapter: adapter) { removed = true }
        quotas.release(.keptDevice, key: Self.keptKey(adapter, address))
        guard removed else {
            throw Problem(.notFound, status: .notFound, detail: "\(address) on \(adapter) is not kept connected")
        }
    }

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

    /// A kept device's name in the quota ledger.
    static func keptKey(_ adapter: String, _ address: BluetoothAddress) -> String { "\(adapter)/\(address)" }

    /// A change the store could not save: a 500 (507 when the disk is
    /// full) that says why (the store's message names the file and the
    /// fix), with nothing changed.
    static func storeProblem(_ error: StoreError) -> Problem {
        Problem(
            .stateStoreFailed, status: error.code == .diskFull ? .insufficientStorage : .internalServerError,
            detail: "nothing was changed: \(error.message)")
    }

    /// Starts keeping the connections the store holds (at start-up).
    public func restoreKeptConnections() async throws(StoreError) -> Int {
        guard let store else { return 0 }
        var restored = 0
        for kept in try await store.keptConnections() {
            guard let address = BluetoothAddress(kept.address) else {
                logger.warning("the state store keeps a connection to '\(kept.address)', which is not an address: skipped")
                continue
            }
            var maxAttempts: Int?
            var label: String?
            if case .object(let members)? = try? JSON.parse(kept.options) {
                if case .int(let value)? = members.first(where: { $0.0 == "max_attempts" })?.1 { maxAttempts = value }
                if case .string(let value)? = members.first(where: { $0.0 == "label" })?.1 { label = value }
            }
            keeper.keep(address, adapter: kept.adapter, maxAttempts: maxAttempts, label: label)
            quotas.restore(.keptDevice, key: Self.keptKey(kept.adapter, address), owner: ClientID(stored: kept.owner))
            restored += 1
        }
        return restored
    }
}
