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
}
