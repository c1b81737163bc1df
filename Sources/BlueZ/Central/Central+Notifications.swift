import AsyncPrimitives
import DBus

extension Central {
    /// Subscribes to a characteristic's notifications or indications.
    ///
    /// The one owner of a characteristic's subscription: every consumer (an
    /// HTTP stream, a standing subscription, an MQTT subscription) gets its
    /// own `NotificationSubscription`, a lease on one shared session per
    /// characteristic (`SubscriptionRecord`): `StartNotify` is sent for the
    /// first lease, `StopNotify` after the last one ends, and each
    /// notification is delivered to every lease as the same
    /// `CharacteristicValue` (whose `derived` values are thus made once). Values arrive from the moment this returns; the sequence ends
    /// with an error when the device disconnects (see
    /// `NotificationSubscription`). Throws `.notSupported` for a
    /// characteristic that neither notifies nor indicates.
    public func subscribe(
        to characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        bufferSize: Int = 256, timeout: Duration? = nil
    ) async throws(BlueZError) -> NotificationSubscription {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: NotificationEvent.self, bufferingPolicy: .bufferingNewest(max(1, bufferSize)))
        let lease = try await lease(characteristic, of: address, adapter: adapter, for: .stream(continuation), timeout: timeout)
        // Ending the iteration gives the share back.
        continuation.onTermination = { _ in lease.cancel() }
        return NotificationSubscription(
            characteristic: lease.characteristic, device: address, adapter: lease.adapter, stream: stream)
    }

    /// Subscribes as `subscribe(to:of:adapter:bufferSize:timeout:)` does,
    /// delivering to `sink` on the notifying thread instead of through a
    /// stream a task iterates: for consumers that only hand values on, many
    /// of them per characteristic (see `NotificationConsumer`).
    public func subscribe(
        to characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String? = nil,
        timeout: Duration? = nil, sink: NotificationSink
    ) async throws(BlueZError) -> NotificationLease {
        try await lease(characteristic, of: address, adapter: adapter, for: .sink(sink), timeout: timeout)
    }

    /// Adds `consumer` to the characteristic's shared record (made by the
    /// first), StartNotify unless bluetoothd already notifies us.
    private func lease(
        _ characteristic: AttributeSelector, of address: BluetoothAddress, adapter: String?,
        for consumer: NotificationConsumer, timeout: Duration?
    ) async throws(BlueZError) -> NotificationLease {
        let deadline = ContinuousClock.now + (timeout ?? options.defaultTimeout)
        let (devicePath, target) = try await resolveSettledCharacteristic(
            characteristic, of: address, adapter: adapter, deadline: deadline)
        guard !target.properties.isDisjoint(with: [.notify, .indicate]) else {
            throw BlueZError(.notSupported, "the characteristic \(target.uuid.shortString) neither notifies nor indicates")
        }
        // Registered before StartNotify, so that no value sent right after
        // it is missed.
        let id = try state.withLock { state throws(BlueZError) -> UInt64 in
            guard let device = state.tree.devices[devicePath] else { throw BlueZError.deviceMissing(address, adapter: adapter, in: state) }
            let id = state.makeID()
            if state.subscriptions[target.path] == nil {
                state.subscriptions[target.path] = SubscriptionRecord(
                    devicePath: devicePath, adapter: device.adapter, device: device.address,
                    service: state.tree.services[target.servicePath]?.uuid, characteristic: target.uuid,
                    handle: target.handle)
            }
            state.subscriptions[target.path]?.subscribers[id] = consumer
            return id
        }
        do {
            try await inLane(Self.notifyClaims(target.path, of: devicePath), deadline: deadline) { () async throws in
                try await self.startNotifyInLane(target.path, deadline: deadline)
            }
        } catch {
            state.withLock { state in
                state.subscriptions[target.path]?.subscribers[id] = nil
                if state.subscriptions[target.path]?.subscribers.isEmpty == true { state.subscriptions[target.path] = nil }
            }
            if case .stream(let continuation) = consumer { continuation.finish() }
            throw error
        }
        let snapshot = state.withLock { $0.tree.snapshot(of: target) }
        // Off the releasing thread, which may hold a stream's or the
        // state's lock: see `Broadcast` (AsyncPrimitives).
        return NotificationLease(characteristic: snapshot, device: address, adapter: adapterName(of: devicePath)) {
            [weak self] in Task { self?.unsubscribe(id, from: target.path) }
        }
    }

    private func adapterName(of devicePath: ObjectPath) -> String {
        devicePath.parent.map { String($0.lastElement) } ?? ""
    }

    /// StartNotify and StopNotify of a characteristic run one at a time
    /// (bluetoothd answers InProgress to a second StartNotify of one client
    /// while the first is pending), beside the device's other operations.
    static func notifyClaims(_ path: ObjectPath, of devicePath: ObjectPath) -> [LaneClaim<LaneKey>] {
        [.shared(.object(devicePath)), .exclusive(.notifying(path))]
    }

    /// StartNotify unless bluetoothd already notifies us (in the
    /// characteristic's notify lane).
    private func startNotifyInLane(_ path: ObjectPath, deadline: ContinuousClock.Instant) async throws(BlueZError) {
        let needed = state.withLock { state -> Bool? in
            guard let record = state.subscriptions[path] else { return nil }
            return !record.notifying
        }
        guard let needed else { throw BlueZError(.notConnected, "the subscription ended before notifications started") }
        guard needed else { return }
        try await startBlueZNotify(path, deadline: deadline)
        let stillWanted = update { state -> Bool in
            guard let record = state.subscriptions[path] else { return false }
            state.subscriptions[path]?.notifying = true
            if record.interrupted {
                state.subscriptions[path]?.interrupted = false
                state.deliveries.append(.notification(.resumed, to: record.subscribers))
            }
            return true
        }
        // Every consumer left (or the device went away) meanwhile.
        if !stillWanted { try? await stopBlueZNotify(path, deadline: deadline) }
    }

    /// StopNotify unless a consumer came since the last one left (in the
    /// characteristic's notify lane).
    private func stopNotifyIfUnwantedInLane(_ path: ObjectPath, deadline: ContinuousClock.Instant) async throws(BlueZError) {
        let stop = state.withLock { state -> Bool in
            guard let record = state.subscriptions[path], record.subscribers.isEmpty else { return false }
            state.subscriptions[path] = nil
            return record.notifying
        }
        if stop { try await stopBlueZNotify(path, deadline: deadline) }
    }

    /// A consumer left: StopNotify once the last one has.
    private func unsubscribe(_ id: UInt64, from path: ObjectPath) {
        let devicePath = state.withLock { state -> ObjectPath? in
            guard var record = state.subscriptions[path], record.subscribers.removeValue(forKey: id) != nil else {
                return nil
            }
            state.subscriptions[path] = record
            return record.subscribers.isEmpty ? record.devicePath : nil
        }
        guard let devicePath else { return }
        Task {
            let deadline = ContinuousClock.now + self.options.defaultTimeout
            // Decided in the lane: a new consumer may have come meanwhile.
            try? await self.inLane(Self.notifyClaims(path, of: devicePath), deadline: deadline) { () async throws in
                try await self.stopNotifyIfUnwantedInLane(path, deadline: deadline)
            }
        }
    }

    /// After a rebuild: keep subscriptions bluetoothd still serves, start
    /// again those it forgot (it restarted) while the device is still
    /// connected, and end the others with the reason.
    func restoreSubscriptions(in state: inout CentralState, effects: inout Effects) {
        for (path, record) in state.subscriptions {
            let connected = state.tree.devices[record.devicePath]?.connected ?? false
            if state.tree.characteristics[path] != nil, connected {
                if !record.notifying { effects.resubscribe.append(path) }
                continue
            }
            state.subscriptions[path] = nil
            let end = SubscriptionEnd(
                .bluezRestarted,
                BlueZError(
                    .notConnected,
                    "BlueZ came back (bluetoothd or the bus restarted) and \(record.device) is no longer connected; subscribe again after reconnecting"
                ))
            for subscriber in record.subscribers.values { state.deliveries.append(.ended(subscriber, end)) }
        }
    }

    /// StartNotify again for a subscription bluetoothd forgot; if that
    /// fails, its consumers are told why.
    func restoreNotify(_ path: ObjectPath) async {
        guard let devicePath = state.withLock({ $0.subscriptions[path]?.devicePath }) else { return }
        let deadline = ContinuousClock.now + options.defaultTimeout
        do {
            try await inLane(Self.notifyClaims(path, of: devicePath), deadline: deadline) { () async throws in
                try await self.startNotifyInLane(path, deadline: deadline)
            }
        } catch {
            // Queued, not made here: values delivered before this end must
            // reach the consumers first.
            update { state in
                guard let record = state.subscriptions.removeValue(forKey: path) else { return }
                let end = SubscriptionEnd(.restartFailed, error)
                for subscriber in record.subscribers.values { state.deliveries.append(.ended(subscriber, end)) }
            }
        }
    }
}
