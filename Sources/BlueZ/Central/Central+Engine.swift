import AsyncPrimitives
import DBus

// The mirror's engine: bluetoothd's signals in, reducer steps, events out.

extension Central {
    /// `org.bluez` changed hands (on the connection's thread, in order with
    /// bluetoothd's signals): bluetoothd stopping empties the mirror;
    /// bluetoothd (re)starting rebuilds it, and its signals from now on wait
    /// for the rebuild.
    func ownerChanged(_ message: Message) {
        guard message.body.count == 3, let old = message.body[1].string, let new = message.body[2].string else {
            return
        }
        if !old.isEmpty {
            vanish(BlueZError(.adapterUnavailable, "bluetoothd stopped"))
        }
        if !new.isEmpty {
            let generation = beginRebuild()
            Task { await self.completeRebuild(generation) }
        }
    }

    /// One reducer step and its consequences. bluetoothd's signals come
    /// here on the connection's loop thread, one at a time in the order it
    /// sent them; the values of one characteristic are thus queued in that
    /// order (or, during a rebuild, queued as signals and applied in it
    /// before any later one), and `DeliveryQueue` delivers them in it.
    func apply(_ signal: TreeSignal) {
        guard options.adapterScope.includes(signal.path) else { return }
        let effects = update { state -> Effects in
            var effects = Effects()
            if state.rebuildQueue != nil {
                state.rebuildQueue?.append(signal)
                return effects
            }
            let changes = state.tree.apply(signal)
            if !changes.isEmpty { dispatch(changes, in: &state, effects: &effects) }
            return effects
        }
        if !effects.isEmpty { perform(effects) }
    }

    /// Reads bluetoothd's objects with GetManagedObjects and replaces the
    /// mirror, then applies the signals that arrived meanwhile and restores
    /// what consumers asked for (discovery, notifications).
    func rebuild() async {
        await completeRebuild(beginRebuild())
    }

    /// Starts queueing signals for a rebuild; returns its generation.
    func beginRebuild() -> UInt64 {
        state.withLock { state -> UInt64 in
            state.rebuildGeneration += 1
            state.rebuildQueue = []
            return state.rebuildGeneration
        }
    }

    /// Reads bluetoothd's objects and replaces the mirror with them, unless
    /// a newer rebuild (or bluetoothd vanishing) overtook this one.
    func completeRebuild(_ generation: UInt64) async {
        let result: Result<Value, any Error>
        do {
            let reply = try await connection.call(
                destination: ObjectManager.bluez, path: .root, interface: ObjectManager.interface,
                method: "GetManagedObjects", timeout: options.rebuildTimeout)
            result = .success(reply.first ?? .vardict([:]))
        } catch {
            result = .failure(error)
        }
        let effects = update { state -> Effects in
            var effects = Effects()
            guard state.rebuildGeneration == generation, !state.stopped else { return effects }
            let queued = state.rebuildQueue ?? []
            state.rebuildQueue = nil
            guard case .success(let objects) = result else {
                state.tree = ObjectTree()
                state.bluetoothdRunning = false
                reportAvailability(in: &state)
                return effects
            }
            state.tree = ObjectTree(managedObjects: objects, scope: options.adapterScope)
            state.bluetoothdRunning = true
            reportAvailability(in: &state)
            state.scanning = [:]
            var changes = state.tree.adapters.keys.map(TreeChange.adapterAdded)
            changes += state.tree.devices.keys.map(TreeChange.deviceAdded)
            dispatch(changes, in: &state, effects: &effects, fromSnapshot: true)
            for signal in queued {
                let changes = state.tree.apply(signal)
                if !changes.isEmpty { dispatch(changes, in: &state, effects: &effects) }
            }
            restoreSubscriptions(in: &state, effects: &effects)
            return effects
        }
        perform(effects)
    }

    /// The bus connection ended (the bus dropped it, or its owner closed
    /// it): BlueZ is unreachable until `attach` hands over a new one.
    func busLost(_ error: DBusError) {
        let newlyLost = state.withLock { state -> Bool in
            guard !state.stopped, state.busLost == nil else { return false }
            state.busLost = error.message
            return true
        }
        guard newlyLost else { return }
        vanish(BlueZError(.bluetoothdUnavailable, "the D-Bus connection is lost (\(error.message))"))
    }

    /// bluetoothd is gone (or the bus): every adapter becomes unavailable,
    /// waiting operations fail, sessions and subscriptions are told they are
    /// interrupted. Subscriptions are kept, to be restored or ended by the
    /// next rebuild.
    func vanish(_ reason: BlueZError) {
        let (effects, acquired) = update { state -> (Effects, [AcquiredNotify]) in
            let effects = Effects()
            // Its acquired sockets with them: closed here, since a socket
            // of a bluetoothd that lost only its bus (or a restarted
            // simulator) would stay open and silent, and a held socket
            // stops the next start from acquiring a new one.
            defer { state.acquiredNotify = [:] }
            let acquired = Array(state.acquiredNotify.values)
            state.rebuildGeneration += 1
            state.rebuildQueue = nil
            let old = state.tree
            state.tree = ObjectTree()
            state.bluetoothdRunning = false
            state.scanning = [:]
            for adapter in old.adapters.values where eventBroadcast.subscriberCount > 0 {
                emit(.adapterState(adapter: adapter.id, .unavailable), in: &state)
            }
            for device in old.devices.values where device.connected && eventBroadcast.subscriberCount > 0 {
                emit(.disconnected(device, reason: nil), in: &state)
            }
            // bluetoothd forgets its notification clients when it exits (and
            // when their bus connection ends).
            for (path, record) in state.subscriptions {
                state.subscriptions[path]?.notifying = false
                guard !record.interrupted else { continue }
                state.subscriptions[path]?.interrupted = true
                state.deliveries.append(.notification(.interrupted(reason), to: record.subscribers))
            }
            reportAvailability(in: &state)
            for (id, session) in state.sessions where !session.interrupted {
                session.continuation.yield(.interrupted(reason))
                state.sessions[id]?.reported = [:]
                state.sessions[id]?.interrupted = true
                if session.monitored != nil { state.sessions[id]?.monitored = [] }
            }
            for waiter in state.waiters.values { state.deliveries.append(.outcome(waiter.promise, .failure(reason))) }
            state.waiters = [:]
            return (effects, acquired)
        }
        for socket in acquired { socket.close() }
        perform(effects)
    }

    /// Tells consumers of `events()` when BlueZ became reachable or not.
    func reportAvailability(in state: inout CentralState) {
        let availability = state.availability
        guard availability != state.reportedAvailability else { return }
        state.reportedAvailability = availability
        emit(.availability(availability), in: &state)
    }

    /// Queues an event for every consumer of `events()`; decided under the
    /// state lock, so consumers see events in the order of the mirror's
    /// changes (see `DeliveryQueue`).
    func emit(_ event: CentralEvent, in state: inout CentralState) {
        state.deliveries.append(.event(event))
    }

    /// Runs `body` under the state lock, then, with the lock released,
    /// makes the deliveries it queued (and those other threads queued
    /// meanwhile), unless another thread is making them already: it then
    /// makes these too, in order (see `DeliveryQueue`).
    ///
    /// Costs on the notification path: the lock is taken once more per
    /// batch (to hand the buffer back and look for more), and nothing is
    /// allocated once the queue's two buffers have grown to the largest
    /// batch.
    func update<T>(_ body: (inout CentralState) -> T) -> T {
        let (result, batch) = state.withLock { state in (body(&state), state.deliveries.claim()) }
        if var batch { deliver(&batch) }
        return result
    }

    /// Makes `batch`'s deliveries, then those queued while it was being
    /// made, until none is left. No lock of the central is held while a
    /// consumer runs.
    private func deliver(_ batch: inout [Delivery]) {
        repeat {
            for delivery in batch { make(delivery) }
            // Emptied here, outside the lock: the values and consumers it
            // held are released here too.
            batch.removeAll(keepingCapacity: true)
        } while state.withLock({ $0.deliveries.next(after: &batch) })
    }

    private func make(_ delivery: Delivery) {
        switch delivery {
        case .notification(let event, let consumers):
            for consumer in consumers.values { consumer.yield(event) }
        case .ended(let consumer, let end):
            consumer.finish(end)
        case .event(let event):
            eventBroadcast.yield(event)
        case .outcome(let promise, let outcome):
            promise.resolve(outcome)
        case .finishEvents:
            eventBroadcast.finish()
        }
    }

    /// Does what was decided under the lock, beside the deliveries.
    func perform(_ effects: Effects) {
        for continuation in effects.finishSessions { continuation.finish() }
        for adapterPath in effects.reconcile {
            Task { try? await self.reconcileDiscovery(adapterPath) }
        }
        for path in effects.resubscribe {
            Task { await self.restoreNotify(path) }
        }
    }

    /// Calls a method of bluetoothd, bounded by `deadline`, errors mapped.
    func call(
        _ path: ObjectPath, _ interface: InterfaceName, _ method: MemberName, _ arguments: [Value] = [],
        deadline: ContinuousClock.Instant
    ) async throws(BlueZError) -> [Value] {
        let remaining = deadline - .now
        guard remaining > .zero else { throw BlueZError(.timeout, "\(method) was not sent: the time ran out") }
        do {
            return try await connection.call(
                destination: ObjectManager.bluez, path: path, interface: interface, method: method,
                arguments: arguments, timeout: remaining)
        } catch let error as DBusError where error.isNoReply {
            throw BlueZError(
                .timeout, "bluetoothd did not answer \(method) in time", dbusName: error.name.rawValue,
                dbusMessage: error.message)
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    /// Registers a waiter for a condition of the tree; it is checked once
    /// at once, then after every reducer step.
    func waiter(_ check: @escaping @Sendable (ObjectTree, [TreeChange]) -> Result<Void, BlueZError>?)
        -> (UInt64, Promise<Void, BlueZError>)
    {
        let promise = Promise<Void, BlueZError>()
        let (id, outcome) = state.withLock { state -> (UInt64, Result<Void, BlueZError>?) in
            let id = state.makeID()
            let outcome = check(state.tree, [])
            if outcome == nil { state.waiters[id] = TreeWaiter(check: check, promise: promise) }
            return (id, outcome)
        }
        if let outcome { promise.resolve(outcome) }
        return (id, promise)
    }

    func removeWaiter(_ id: UInt64) {
        _ = state.withLock { $0.waiters.removeValue(forKey: id) }
    }
}
