import DBus

// Lookups in the GATT part of the tree. They scan the device's objects:
// a device has tens of attributes, and these serve requests, not signals.

extension ObjectTree {
    /// The services of a device, by handle, with characteristics and
    /// descriptors filled in.
    func gattServices(of devicePath: ObjectPath, serviceUUIDs: [BluetoothUUID] = []) -> [GATTService] {
        var chosen: [ObjectPath: MirroredService] = [:]
        for service in services.values where service.devicePath == devicePath {
            if serviceUUIDs.isEmpty || serviceUUIDs.contains(service.uuid) { chosen[service.path] = service }
        }
        guard !chosen.isEmpty else { return [] }
        var byService: [ObjectPath: [GATTCharacteristic]] = [:]
        for characteristic in characteristics.values where chosen[characteristic.servicePath] != nil {
            byService[characteristic.servicePath, default: []].append(snapshot(of: characteristic))
        }
        return chosen.values.map { service in
            let included = service.includes.compactMap { path in
                services[path].map { IncludedService(uuid: $0.uuid, handle: $0.handle) }
            }
            return GATTService(
                service, includedServices: included,
                characteristics: (byService[service.path] ?? []).sorted(by: Self.attributeOrder))
        }
        .sorted(by: Self.attributeOrder)
    }

    /// A characteristic with its service's UUID and its descriptors.
    func snapshot(of characteristic: MirroredCharacteristic) -> GATTCharacteristic {
        GATTCharacteristic(
            characteristic, serviceUUID: services[characteristic.servicePath]?.uuid,
            descriptors: descriptors(of: characteristic.path))
    }

    /// The descriptors of a characteristic, by handle.
    func descriptors(of characteristicPath: ObjectPath) -> [GATTDescriptor] {
        descriptors.values.filter { $0.characteristicPath == characteristicPath }.map(GATTDescriptor.init)
            .sorted(by: Self.attributeOrder)
    }

    /// The characteristic of a device a selector names.
    func characteristic(_ selector: AttributeSelector, ofDevice devicePath: ObjectPath) throws(BlueZError)
        -> MirroredCharacteristic
    {
        let candidates = characteristics.values.filter { characteristic in
            guard let service = services[characteristic.servicePath], service.devicePath == devicePath else {
                return false
            }
            switch selector {
            case .handle(let handle): return characteristic.handle == handle
            case .uuid(let uuid, let serviceUUID):
                return characteristic.uuid == uuid && (serviceUUID == nil || service.uuid == serviceUUID)
            }
        }
        .sorted(by: Self.attributeOrder)
        guard let first = candidates.first else {
            if devices[devicePath]?.connected == false, services.values.contains(where: { $0.devicePath == devicePath }) == false {
                throw BlueZError(.notConnected, "the device is not connected, so its characteristics are unknown")
            }
            throw BlueZError(.notFound, "no characteristic \(selector)")
        }
        guard candidates.count == 1 else {
            throw BlueZError(
                .ambiguous, "\(candidates.count) characteristics match \(selector); name the service or the handle",
                candidates: candidates.map { candidate in
                    let service = services[candidate.servicePath]
                    return AttributeCandidate(
                        uuid: candidate.uuid, handle: candidate.handle, serviceUUID: service?.uuid ?? candidate.uuid,
                        serviceHandle: service?.handle)
                })
        }
        return first
    }

    /// The descriptor of a characteristic a selector names (by UUID among
    /// its descriptors, or by handle).
    func descriptor(_ selector: AttributeSelector, of characteristic: MirroredCharacteristic) throws(BlueZError)
        -> MirroredDescriptor
    {
        let candidates = descriptors.values.filter { descriptor in
            guard descriptor.characteristicPath == characteristic.path else { return false }
            switch selector {
            case .handle(let handle): return descriptor.handle == handle
            case .uuid(let uuid, _): return descriptor.uuid == uuid
            }
        }
        .sorted(by: Self.attributeOrder)
        guard let first = candidates.first else { throw BlueZError(.notFound, "no descriptor \(selector)") }
        guard candidates.count == 1 else {
            let service = services[characteristic.servicePath]
            throw BlueZError(
                .ambiguous, "\(candidates.count) descriptors match \(selector); name the handle",
                candidates: candidates.map {
                    AttributeCandidate(
                        uuid: $0.uuid, handle: $0.handle, serviceUUID: service?.uuid ?? characteristic.uuid,
                        serviceHandle: service?.handle)
                })
        }
        return first
    }

    /// Handle order, then path order for objects without a handle.
    static func attributeOrder<T: GATTAttribute>(_ lhs: T, _ rhs: T) -> Bool {
        (lhs.handle ?? 0, lhs.path.rawValue) < (rhs.handle ?? 0, rhs.path.rawValue)
    }
}

/// What the GATT snapshot types share, for sorting.
protocol GATTAttribute {
    var path: ObjectPath { get }
    var handle: UInt16? { get }
}

extension GATTService: GATTAttribute {}
extension GATTCharacteristic: GATTAttribute {}
extension GATTDescriptor: GATTAttribute {}
extension MirroredService: GATTAttribute {}
extension MirroredCharacteristic: GATTAttribute {}
extension MirroredDescriptor: GATTAttribute {}
