import BlueZ
import PersistedState

// The peripheral role: GATT applications and advertisements published
// through the gateway (stored, counted in the quotas, and registered with
// bluetoothd by `peripheral`), the values of their characteristics, and the
// answers to centrals' requests for delegated ones.
extension GatewayCore {
    /// Publishes an application for `owner`, stored before it returns (the
    /// store has committed it); a store that fails withdraws it again, so
    /// that nothing runs that a restart would not bring back.
    public func publish(_ command: PublishApplicationCommand, owner: String) async throws(GatewayCommandError)
        -> PublishedApplication
    {
        try await publication(.application, quota: applicationQuota, owner: owner, stored: command.stored) {
            () async throws(GatewayCommandError) in
            let id = try await bluez { () async throws(BlueZError) in
                try await peripheral.publish(command.application, adapter: command.adapter ?? defaultAdapter)
            }
            return try bluez { () throws(BlueZError) in try peripheral.application(id) }
        } id: {
            ($0.id, $0.adapter)
        } withdraw: { id in
            _ = try? await peripheral.removeApplication(id)
        }
    }

    /// Advertises for `owner`, stored before it returns, as `publish`.
    public func advertise(_ command: AdvertiseCommand, owner: String) async throws(GatewayCommandError)
        -> PublishedAdvertisement
    {
        try await publication(.advertisement, quota: advertisementQuota, owner: owner, stored: command.stored) {
            () async throws(GatewayCommandError) in
            let id = try await bluez { () async throws(BlueZError) in
                try await peripheral.advertise(command.advertisement, adapter: command.adapter ?? defaultAdapter)
            }
            return try bluez { () throws(BlueZError) in try peripheral.advertisement(id) }
        } id: {
            ($0.id, $0.adapter)
        } withdraw: { id in
            _ = try? await peripheral.stopAdvertising(id)
        }
    }

    /// Withdraws an application or advertisement from bluetoothd, frees its
    /// place and forgets it; BlueZ's `not-found` when there is none.
    public func withdraw(_ command: WithdrawCommand) async throws(GatewayCommandError) {
        switch command.kind {
        case .application:
            _ = try await bluez { () async throws(BlueZError) in try await peripheral.removeApplication(command.id) }
            applicationQuota?.release(command.id)
        case .advertisement:
            _ = try await bluez { () async throws(BlueZError) in try await peripheral.stopAdvertising(command.id) }
            advertisementQuota?.release(command.id)
        }
        guard let publicationStore else { return }
        do {
            _ = try await publicationStore.removePublication(command.kind, id: command.id)
        } catch {
            throw .stateStore(error)
        }
    }

    /// The applications published, in the order published.
    public func publishedApplications() -> [PublishedApplication] { peripheral.applications() }

    public func publishedApplication(_ id: String) throws(GatewayCommandError) -> PublishedApplication {
        try bluez { () throws(BlueZError) in try peripheral.application(id) }
    }

    /// The advertisements published, in the order published.
    public func publishedAdvertisements() -> [PublishedAdvertisement] { peripheral.advertisements() }

    public func publishedAdvertisement(_ id: String) throws(GatewayCommandError) -> PublishedAdvertisement {
        try bluez { () throws(BlueZError) in try peripheral.advertisement(id) }
    }

    /// What bluetoothd's advertising manager of the adapter (nil: the
    /// default, else BlueZ's first) can take.
    public func advertisingCapacity(adapter: String?) async throws(GatewayCommandError) -> AdvertisingCapacity {
        try await bluez { () async throws(BlueZError) in
            try await peripheral.advertisingCapacity(adapter: adapter ?? defaultAdapter)
        }
    }

    /// The value a published characteristic holds.
    public func localValue(_ characteristic: LocalCharacteristic) throws(GatewayCommandError) -> [UInt8] {
        try bluez { () throws(BlueZError) in
            try peripheral.value(of: characteristic.uuid, service: characteristic.service, in: characteristic.application)
        }
    }

    /// Sets a published characteristic's value (stored first); true when a
    /// subscribed central was notified.
    public func setLocalValue(_ command: SetLocalValueCommand) async throws(GatewayCommandError) -> Bool {
        let characteristic = command.characteristic
        if let publicationStore {
            let index = try bluez { () throws(BlueZError) in
                try peripheral.characteristicIndex(
                    of: characteristic.uuid, service: characteristic.service, in: characteristic.application)
            }
            do {
                try await publicationStore.setPublishedValue(
                    command.value, characteristic: index, application: characteristic.application)
            } catch {
                throw .stateStore(error)
            }
        }
        return try await bluez { () async throws(BlueZError) in
            try await peripheral.setValue(
                command.value, of: characteristic.uuid, service: characteristic.service, in: characteristic.application)
        }
    }

    /// Answers a central's request for a delegated characteristic.
    public func answerCentralRequest(_ command: AnswerCentralRequestCommand) throws(GatewayCommandError) {
        try bluez { () throws(BlueZError) in try peripheral.respond(to: command.id, with: command.answer) }
    }

    /// Unregisters and unexports everything published (before the bus
    /// connection closes); they stay stored for the next start.
    public func stopPeripheral() async -> (applications: Int, advertisements: Int) {
        await peripheral.stop()
    }

    /// Publishes again what the store holds (at start-up), under the same
    /// ids and with the values clients set, each counted against its stored
    /// owner whatever the limits. What bluetoothd cannot take now (BlueZ
    /// not running yet) is registered when BlueZ becomes available, and
    /// named in `restoration`; a definition this gateway cannot read, or an
    /// item it cannot restore at all (an id it would not have given), is
    /// skipped and named.
    func restorePublications(into restoration: inout Restoration) async throws(StateStoreFailure) {
        guard let publicationStore else { return }
        for item in try await publicationStore.publications() {
            let failure: BlueZError?
            do throws(BlueZError) {
                switch item.definition {
                case .application(let application):
                    failure = try await peripheral.restore(
                        application, id: item.id, adapter: item.adapter, values: item.values)
                    applicationQuota?.restore(item.id, owner: item.owner)
                    restoration.applications += 1
                case .advertisement(let advertisement):
                    failure = try await peripheral.restore(advertisement, id: item.id, adapter: item.adapter)
                    advertisementQuota?.restore(item.id, owner: item.owner)
                    restoration.advertisements += 1
                case .unreadable(let reason):
                    restoration.unreadablePublications.append(
                        Restoration.Publication(kind: item.kind, id: item.id, adapter: item.adapter, reason: reason))
                    continue
                }
            } catch {
                restoration.unreadablePublications.append(
                    Restoration.Publication(kind: item.kind, id: item.id, adapter: item.adapter, reason: error.message))
                continue
            }
            if let failure {
                restoration.unregisteredPublications.append(
                    Restoration.Publication(kind: item.kind, id: item.id, adapter: item.adapter, reason: "\(failure)"))
            }
        }
    }

    /// Publishes something of `kind` for `owner`: takes its quota place,
    /// registers it (`register`), then stores it; a store that fails
    /// withdraws it again (`withdraw`, by id), and any failure gives the
    /// place back.
    private func publication<Published>(
        _ kind: PublishedItem.Kind, quota: (any ClientQuota<String>)?, owner: String, stored: [UInt8],
        register: () async throws(GatewayCommandError) -> Published, id: (Published) -> (id: String, adapter: String),
        withdraw: (String) async -> Void
    ) async throws(GatewayCommandError) -> Published {
        let place = try quota?.reserve(for: owner)
        let published: Published
        do throws(GatewayCommandError) {
            published = try await register()
            let (id, adapter) = id(published)
            if let publicationStore {
                do {
                    try await publicationStore.savePublication(
                        PublishedItem(kind: kind, id: id, adapter: adapter, definition: stored, owner: owner))
                } catch {
                    await withdraw(id)
                    throw .stateStore(error)
                }
            }
        } catch {
            if let place { quota?.cancel(place) }
            throw error
        }
        if let place { quota?.assign(place, to: id(published).id) }
        return published
    }

    /// What `body` returns; BlueZ's refusal as the core's error.
    private func bluez<Value>(_ body: () async throws(BlueZError) -> Value) async throws(GatewayCommandError) -> Value {
        do {
            return try await body()
        } catch {
            throw .bluez(error)
        }
    }

    private func bluez<Value>(_ body: () throws(BlueZError) -> Value) throws(GatewayCommandError) -> Value {
        do {
            return try body()
        } catch {
            throw .bluez(error)
        }
    }
}
