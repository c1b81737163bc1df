import DBus

/// A running advertisement as the API shows it.
public struct PublishedAdvertisement: Sendable, Hashable {
    public var id: String
    public var adapter: String
    public var definition: Advertisement
    /// Whether bluetoothd has it registered now.
    public var registered: Bool
}

/// How many advertisements an adapter takes, from `LEAdvertisingManager1`.
public struct AdvertisingCapacity: Sendable, Hashable {
    public var supportedInstances: Int
    public var activeInstances: Int
    public var supportedIncludes: [String]
}

extension Peripheral {
    static let advertisementInterfaceName: InterfaceName = "org.bluez.LEAdvertisement1"

    /// Exports `advertisement` and registers it with bluetoothd on
    /// `adapter`. Data too long is `.invalidArguments` before bluetoothd is
    /// asked; no free instance is bluetoothd's `NotPermitted` ("Maximum
    /// advertisements reached").
    public func advertise(_ advertisement: Advertisement, adapter: String? = nil) async throws(BlueZError) -> String {
        try advertisement.validate()
        let (adapterID, adapterPath) = try adapterPath(adapter)
        let record = try state.withLock { state throws(BlueZError) -> AdvertisementRecord in
            guard !state.stopped else { throw BlueZError(.cancelled, "the peripheral stopped") }
            state.nextAdvertisement += 1
            let id = "adv\(state.nextAdvertisement)"
            let record = AdvertisementRecord(
                id: id, adapter: adapterID, adapterPath: adapterPath,
                path: ObjectPath(unchecked: options.root.rawValue + "/" + id), definition: advertisement)
            state.advertisements[id] = record
            return record
        }
        do {
            try await registerAdvertisement(record.id)
        } catch {
            state.withLock { _ = $0.advertisements.removeValue(forKey: record.id) }
            central.connection.objects.remove(at: record.path)
            throw error
        }
        return record.id
    }

    /// Starts again an advertisement the gateway ran before it restarted,
    /// under its old id. As with `restore(_:id:adapter:values:)`, it is
    /// kept when bluetoothd cannot register it now, and the error returned;
    /// what cannot be restored at all is thrown.
    public func restore(_ advertisement: Advertisement, id: String, adapter: String) async throws(BlueZError) -> BlueZError? {
        try Self.checkRestored(id: id, prefix: "adv", adapter: adapter)
        try advertisement.validate()
        try state.withLock { state throws(BlueZError) in
            guard !state.stopped else { throw BlueZError(.cancelled, "the peripheral stopped") }
            guard state.advertisements[id] == nil else { throw BlueZError(.alreadyExists, "advertisement \(id) exists") }
            if let number = Self.number(id, prefix: "adv") { state.nextAdvertisement = max(state.nextAdvertisement, number) }
            state.advertisements[id] = AdvertisementRecord(
                id: id, adapter: adapter, adapterPath: ObjectPath(unchecked: "/org/bluez/" + adapter),
                path: ObjectPath(unchecked: options.root.rawValue + "/" + id), definition: advertisement)
        }
        do throws(BlueZError) {
            try await registerAdvertisement(id)
            return nil
        } catch {
            central.connection.objects.remove(at: ObjectPath(unchecked: options.root.rawValue + "/" + id))
            return error
        }
    }

    /// Unregisters and unexports an advertisement. Returns whether
    /// bluetoothd acknowledged the unregistration (it is gone either way).
    @discardableResult
    public func stopAdvertising(_ id: String) async throws(BlueZError) -> Bool {
        guard let record = state.withLock({ $0.advertisements.removeValue(forKey: id) }) else {
            throw BlueZError(.notFound, "no advertisement \(id)")
        }
        var unregistered = false
        if record.registered {
            unregistered = (try? await callBluetoothd(
                record.adapterPath, PeripheralManagers.advertisingManager, "UnregisterAdvertisement",
                [.objectPath(record.path)])) != nil
        }
        central.connection.objects.remove(at: record.path)
        return unregistered
    }

    /// The running advertisements.
    public func advertisements() -> [PublishedAdvertisement] {
        state.withLock { state in
            state.advertisements.values.sorted { $0.id.count == $1.id.count ? $0.id < $1.id : $0.id.count < $1.id.count }
                .map { PublishedAdvertisement(id: $0.id, adapter: $0.adapter, definition: $0.definition, registered: $0.registered) }
        }
    }

    /// One running advertisement.
    public func advertisement(_ id: String) throws(BlueZError) -> PublishedAdvertisement {
        try state.withLock { state throws(BlueZError) in
            guard let record = state.advertisements[id] else { throw BlueZError(.notFound, "no advertisement \(id)") }
            return PublishedAdvertisement(
                id: record.id, adapter: record.adapter, definition: record.definition, registered: record.registered)
        }
    }

    /// The adapter's advertising capacity, read from bluetoothd.
    public func advertisingCapacity(adapter: String? = nil) async throws(BlueZError) -> AdvertisingCapacity {
        let (_, path) = try adapterPath(adapter)
        do {
            let reply = try await central.connection.call(
                destination: ObjectManager.bluez, path: path, interface: "org.freedesktop.DBus.Properties",
                method: "GetAll", arguments: [.string(PeripheralManagers.advertisingManager.rawValue)],
                timeout: options.callTimeout)
            let properties = reply.first?.vardict ?? [:]
            return AdvertisingCapacity(
                supportedInstances: Int(properties["SupportedInstances"]?.byte ?? 0),
                activeInstances: Int(properties["ActiveInstances"]?.byte ?? 0),
                supportedIncludes: properties["SupportedIncludes"]?.strings ?? [])
        } catch {
            throw BlueZError.wrapping(error)
        }
    }

    func registerAdvertisement(_ id: String) async throws(BlueZError) {
        guard var record = state.withLock({ $0.advertisements[id] }) else { return }
        record.adapterPath = try adapterPath(record.adapter).path
        state.withLock { [record] in $0.advertisements[id]?.adapterPath = record.adapterPath }
        do {
            try central.connection.objects.add(
                advertisementInterface(), at: record.path, properties: Self.properties(of: record.definition))
        } catch {
            throw BlueZError.wrapping(error)
        }
        try await callBluetoothd(
            record.adapterPath, PeripheralManagers.advertisingManager, "RegisterAdvertisement",
            [.objectPath(record.path), .vardict([:])])
        state.withLock { $0.advertisements[id]?.registered = true }
    }

    /// bluetoothd calls `Release` when it drops an advertisement itself
    /// (the adapter went away or was powered off).
    private func advertisementInterface() -> ExportedInterface {
        ExportedInterface(
            Self.advertisementInterfaceName,
            methods: [
                .init("Release") { [weak self] call in
                    self?.state.withLock { state in
                        for (id, record) in state.advertisements where record.path == call.path {
                            state.advertisements[id]?.registered = false
                        }
                    }
                    return []
                }
            ],
            properties: [
                .init("Type", .string), .init("LocalName", .string), .init("ServiceUUIDs", .array(.string)),
                .init("ManufacturerData", .dictionary(key: .uint16, value: .variant)),
                .init("ServiceData", .dictionary(key: .string, value: .variant)), .init("Appearance", .uint16),
                .init("Discoverable", .boolean), .init("Includes", .array(.string)), .init("TxPower", .int16),
                .init("MinInterval", .uint32), .init("MaxInterval", .uint32),
            ])
    }

    /// The `LEAdvertisement1` properties; absent options are left out, so
    /// bluetoothd applies its defaults.
    static func properties(of advertisement: Advertisement) -> [String: Value] {
        var properties: [String: Value] = ["Type": .string(advertisement.type.rawValue)]
        if let name = advertisement.localName { properties["LocalName"] = .string(name) }
        if !advertisement.serviceUUIDs.isEmpty {
            properties["ServiceUUIDs"] = .strings(advertisement.serviceUUIDs.map(\.uuidString))
        }
        if !advertisement.manufacturerData.isEmpty {
            properties["ManufacturerData"] = .dictionary(
                key: .uint16, value: .variant,
                advertisement.manufacturerData.sorted { $0.key < $1.key }.map {
                    DictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
                })
        }
        if !advertisement.serviceData.isEmpty {
            properties["ServiceData"] = .dictionary(
                key: .string, value: .variant,
                advertisement.serviceData.sorted { $0.key.uuidString < $1.key.uuidString }.map {
                    DictionaryEntry(.string($0.key.uuidString), .variant(.bytes($0.value)))
                })
        }
        if let appearance = advertisement.appearance { properties["Appearance"] = .uint16(appearance) }
        if let discoverable = advertisement.discoverable { properties["Discoverable"] = .boolean(discoverable) }
        if advertisement.includeTxPower { properties["Includes"] = .strings(["tx-power"]) }
        if let txPower = advertisement.txPower { properties["TxPower"] = .int16(txPower) }
        if let minInterval = advertisement.minInterval { properties["MinInterval"] = .uint32(minInterval) }
        if let maxInterval = advertisement.maxInterval { properties["MaxInterval"] = .uint32(maxInterval) }
        return properties
    }
}
