import BlueZ
import HTTPServer
import PersistedState

extension Gateway {
    func addKeepRoutes(to router: inout Router) {
        // Keeping is durable before the answer: the store has committed it.
        router.put("/v1/devices/{address}/keep") { [self] request in
            let (address, requested) = try deviceTarget(request)
            let body = try JSONBody(request, allowed: Self.keepFields, optional: true)
            let maxAttempts = try body["max_attempts"].int(in: 1...1_000_000)
            let label = try body["label"].string(maxLength: 128)
            if let wish = try Self.fleetKeep(address, body) { return try await keepByFleet(wish) }
            let adapter = try keptAdapter(address, requested)
            let key = Self.keptKey(adapter, address)
            let client = client(request)
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
            let kept = keeper.keptDevice(address, adapter: adapter)
            return .json(kept.map(Self.keptJSON) ?? .null, status: isNew ? .created : .ok)
        }
        router.get("/v1/devices/{address}/keep") { [self] request in
            let (address, requested) = try deviceTarget(request)
            let adapter = try keptAdapter(address, requested)
            guard let kept = keeper.keptDevice(address, adapter: adapter) else {
                throw Problem(.notFound, status: .notFound, detail: "\(address) on \(adapter) is not kept connected")
            }
            return .json(Self.keptJSON(kept))
        }
        router.delete("/v1/devices/{address}/keep") { [self] request in
            let (address, requested) = try deviceTarget(request)
            if try Self.fleetQuery(request) { return try await unkeepByFleet(address) }
            let adapter = try keptAdapter(address, requested)
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
            return Response(status: .noContent)
        }
        router.get("/v1/kept-connections") { [self] _ in
            .json(.array(keeper.keptDevices().map(Self.keptJSON)))
        }
    }

    /// The adapter of a device named without `?adapter=` on the keep
    /// routes: the one it is kept on (so that keeping can be seen, changed
    /// and ended while bluetoothd is away), else the adapter that hears it
    /// best with a free connection slot (`Central.preferredAdapter`), else
    /// as `keepAdapter`.
    func keptAdapter(_ address: BluetoothAddress, _ requested: String?) throws(Problem) -> String {
        if let requested { return requested }
        if let kept = keeper.keptDevices().first(where: { $0.address == address }) { return kept.adapter }
        if let preferred = central.preferredAdapter(for: address) { return preferred }
        return try keepAdapter(nil)
    }

    /// The adapter a kept connection is stored under: the one asked for,
    /// else the gateway's default, else BlueZ's first.
    func keepAdapter(_ requested: String?) throws(Problem) -> String {
        if let requested { return requested }
        guard let first = central.adapters().first?.id else {
            throw Problem(
                .adapterUnavailable, status: .serviceUnavailable,
                detail: "no adapter to keep the device on: name one with ?adapter= or start bluetoothd with an adapter")
        }
        return first
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

    static func keptJSON(_ kept: ConnectionKeeper.KeptDevice) -> JSON {
        var members: [(String, JSON)] = [
            ("adapter", .string(kept.adapter)), ("via", .string(kept.via)), ("address", .string(kept.address.description)),
            ("status", .string(kept.status.rawValue)), ("failed_attempts", .int(kept.failedAttempts)),
            ("max_attempts", kept.maxAttempts.map { .int($0) } ?? .null),
        ]
        if let reason = kept.lastReason { members.append(("last_reason", .string(reason))) }
        if let label = kept.label { members.append(("label", .string(label))) }
        return .object(members)
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
