import AsyncPrimitives
import DBus

extension Central {
    /// Every adapter's connection slots: limit, used, and waiting requests
    /// it could serve. Empty while BlueZ is unreachable.
    public func connectionSlots() -> [AdapterSlots] {
        state.withLock { state in
            state.tree.adapters.values.sorted { $0.id < $1.id }.map { adapter in
                AdapterSlots(
                    adapter: adapter.id, limit: options.slotLimits.limit(of: adapter.id),
                    used: state.slots.used(adapter.id, in: state.tree), queued: state.slots.queued(adapter.id, in: state.tree))
            }
        }
    }

    /// The adapter a connection to `address` that names none would use
    /// now (see `connect`): the one it is connected through, else the
    /// powered adapter that hears it best with a free slot, else the one
    /// that hears it best. Nil when no adapter lists the device.
    public func preferredAdapter(for address: BluetoothAddress) -> String? {
        state.withLock { state in
            if let choice = state.slots.choose(address, adapter: nil, in: state.tree, limits: options.slotLimits) {
                return choice.adapter
            }
            let unlimited = SlotLimits(perAdapter: .max)
            return state.slots.choose(address, adapter: nil, in: state.tree, limits: unlimited)?.adapter
        }
    }

    /// Takes a slot for a connection to `address` (on `adapter`, or on the
    /// adapter chosen as `ConnectionSlots.choose` says), waiting behind
    /// earlier requests until one frees or `deadline` passes
    /// (`.noConnectionSlot`). The caller gives it back with `releaseSlot`.
    func takeSlot(for address: BluetoothAddress, adapter: String?, deadline: ContinuousClock.Instant)
        async throws(BlueZError) -> ConnectionSlots.Grant
    {
        let promise = Promise<Void, BlueZError>()
        let limits = options.slotLimits
        let id = update { state in
            let id = state.makeID()
            // Behind every earlier request: a slot one of them can take is
            // not this one's.
            state.slots.queue.append(.init(id: id, address: address, adapter: adapter, promise: promise))
            Self.serveSlots(in: &state, limits: limits)
            return id
        }
        let place = adapter.map { "on \($0)" } ?? "on any adapter that hears it"
        let outcome = await promise.wait(
            deadline: deadline,
            timeout: BlueZError(
                .noConnectionSlot,
                "no connection slot for \(address) \(place) before the deadline: every one holds its limit"),
            cancelled: BlueZError(.cancelled, "the connection was cancelled"))
        return try state.withLock { state throws(BlueZError) in
            // Served before the wait ended, even when the deadline won the
            // race for the promise: the slot is the caller's.
            if let grant = state.slots.granted.removeValue(forKey: id) { return grant }
            state.slots.queue.removeAll { $0.id == id }
            if case .failure(let error) = outcome { throw error }
            throw BlueZError(.noConnectionSlot, "no connection slot for \(address) \(place)")
        }
    }

    /// Gives a slot back: it stays used while the device is connected
    /// (the mirror counts it), and the next waiting request may take it.
    func releaseSlot(_ grant: ConnectionSlots.Grant) {
        let limits = options.slotLimits
        update { state in
            state.slots.reserved[grant.id] = nil
            Self.serveSlots(in: &state, limits: limits)
        }
    }

    /// Serves the waiting requests that slots allow now; their callers
    /// wake after the lock is released.
    static func serveSlots(in state: inout CentralState, limits: SlotLimits) {
        let tree = state.tree
        for promise in state.slots.serve(in: tree, limits: limits) {
            state.deliveries.append(.outcome(promise, .success(())))
        }
    }
}
