import DBus

extension Central {
    /// Powers an adapter on or off (`Adapter1.Powered`) and returns it once
    /// the mirror shows the new state.
    @discardableResult
    public func setPowered(_ powered: Bool, adapter: String? = nil, timeout: Duration? = nil)
        async throws(BlueZError) -> Adapter
    {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let target = try adapterSnapshot(adapter)
        if target.powered == powered { return target }
        let path = target.path
        let (id, promise) = waiter { tree, _ in
            guard let adapter = tree.adapters[path] else {
                return .failure(BlueZError(.adapterUnavailable, "\(target.id) went away"))
            }
            return adapter.powered == powered ? .success(()) : nil
        }
        defer { removeWaiter(id) }
        _ = try await inLane(path, deadline: deadline) { () async throws in
            try await self.call(
                path, ObjectManager.properties, "Set",
                [.string(Adapter1.interface.rawValue), .string("Powered"), .variant(.boolean(powered))],
                deadline: deadline)
        }
        try await promise.wait(
            deadline: deadline, timeout: BlueZError(.timeout, "\(target.id) did not report Powered=\(powered) in time")
        ).get()
        return try adapterSnapshot(target.id)
    }

    /// An adapter's state once the mirror holds everything bluetoothd said
    /// before this call: one round trip to it, since bluetoothd flushes its
    /// pending property changes before any reply and this connection applies
    /// signals before it delivers a later reply (see `awaitGATTObjects`).
    ///
    /// Powering off, bluetoothd drops the adapter's links and forgets the
    /// devices it only discovered before it announces `Powered: false`, so
    /// a connection attempt can fail on the first of those while the mirror
    /// still shows the adapter on. Whoever judges such a failure asks here.
    func settledAdapterState(_ id: String) async -> AdapterState {
        guard let adapter = try? adapterSnapshot(id) else { return .unavailable }
        _ = try? await call(
            adapter.path, ObjectManager.properties, "Get", [.string(Adapter1.interface.rawValue), .string("Powered")],
            deadline: .now + .seconds(2))
        return adapterState(id)
    }
}
