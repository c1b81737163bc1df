import DBus

extension ObjectTree {
    /// Applies one signal in place and returns what changed. Equivalent to
    /// `applying(_:)` without copying the tree: this is the hot path for
    /// every notification and advertisement.
    ///
    /// Total: an object or property it does not know is ignored, a removal
    /// of something absent changes nothing, so replaying a signal that a
    /// `GetManagedObjects` snapshot already contains is harmless.
    mutating func apply(_ signal: TreeSignal) -> [TreeChange] {
        switch signal {
        case .interfacesAdded(let path, let interfaces):
            return addInterfaces(interfaces, at: path)
        case .interfacesRemoved(let path, let names):
            return removeInterfaces(names, at: path)
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            return changeProperties(changed, invalidated: invalidated, of: interface, at: path)
        case .deviceDisconnected(let path, let reason, _):
            guard devices[path] != nil else { return [] }
            devices[path]?.lastDisconnectReason = reason
            return []
        case .connectReturned(let path):
            guard let device = devices[path], !device.connected else { return [] }
            devices[path]?.connected = true
            return [.deviceConnected(path)]
        }
    }

    private mutating func addInterfaces(_ interfaces: [InterfaceName: [String: Value]], at path: ObjectPath)
        -> [TreeChange]
    {
        var changes: [TreeChange] = []
        for (name, properties) in interfaces {
            switch name {
            case Adapter1.interface:
                if adapters[path] != nil {
                    changes += changeProperties(properties, invalidated: [], of: name, at: path)
                } else {
                    var adapter = Adapter(path: path)
                    Adapter1.apply(properties, to: &adapter)
                    adapters[path] = adapter
                    changes.append(.adapterAdded(path))
                }
            case Device1.interface:
                if devices[path] != nil {
                    changes += changeProperties(properties, invalidated: [], of: name, at: path)
                } else if let device = Device1.make(path: path, properties: properties) {
                    devices[path] = device
                    changes.append(.deviceAdded(path))
                    if device.connected { changes.append(.deviceConnected(path)) }
                    if device.servicesResolved { changes.append(.servicesResolved(path)) }
                }
            case GattService1.interface:
                if let service = GattService1.make(path: path, properties: properties) {
                    let isNew = services.updateValue(service, forKey: path) == nil
                    if isNew { changes.append(.gattAdded(path)) }
                }
            case GattCharacteristic1.interface:
                if let characteristic = GattCharacteristic1.make(path: path, properties: properties) {
                    let isNew = characteristics.updateValue(characteristic, forKey: path) == nil
                    if isNew { changes.append(.gattAdded(path)) }
                }
            case GattDescriptor1.interface:
                if let descriptor = GattDescriptor1.make(path: path, properties: properties) {
                    let isNew = descriptors.updateValue(descriptor, forKey: path) == nil
                    if isNew { changes.append(.gattAdded(path)) }
                }
            default:
                break
            }
        }
        return changes
    }

    private mutating func removeInterfaces(_ names: [InterfaceName], at path: ObjectPath) -> [TreeChange] {
        var changes: [TreeChange] = []
        for name in names {
            switch name {
            case Adapter1.interface:
                if let adapter = adapters.removeValue(forKey: path) { changes.append(.adapterRemoved(adapter)) }
            case Device1.interface:
                if let device = devices.removeValue(forKey: path) {
                    if device.connected { changes.append(.deviceDisconnected(path, reason: device.lastDisconnectReason)) }
                    changes.append(.deviceRemoved(device))
                }
            case GattService1.interface:
                if services.removeValue(forKey: path) != nil { changes.append(.gattRemoved(path)) }
            case GattCharacteristic1.interface:
                if characteristics.removeValue(forKey: path) != nil { changes.append(.gattRemoved(path)) }
            case GattDescriptor1.interface:
                if descriptors.removeValue(forKey: path) != nil { changes.append(.gattRemoved(path)) }
            default:
                break
            }
        }
        return changes
    }

    private mutating func changeProperties(
        _ changed: [String: Value], invalidated: [String], of interface: InterfaceName, at path: ObjectPath
    ) -> [TreeChange] {
        switch interface {
        case GattCharacteristic1.interface:
            guard characteristics[path] != nil else { return [] }
            characteristics[path].modify { GattCharacteristic1.apply(changed, invalidated: invalidated, to: &$0) }
            if let value = changed["Value"]?.bytes { return [.characteristicValue(path, value)] }
            return []
        case Device1.interface:
            return changeDevice(changed, invalidated: invalidated, at: path)
        case Adapter1.interface:
            guard adapters[path] != nil else { return [] }
            adapters[path].modify { Adapter1.apply(changed, invalidated: invalidated, to: &$0) }
            return [.adapterChanged(path, Array(changed.keys) + invalidated)]
        case GattDescriptor1.interface:
            guard descriptors[path] != nil else { return [] }
            descriptors[path].modify { GattDescriptor1.apply(changed, invalidated: invalidated, to: &$0) }
            return []
        case GattService1.interface:
            guard services[path] != nil else { return [] }
            services[path].modify { GattService1.apply(changed, to: &$0) }
            return []
        default:
            return []
        }
    }

    private mutating func changeDevice(_ changed: [String: Value], invalidated: [String], at path: ObjectPath)
        -> [TreeChange]
    {
        guard let before = devices[path] else { return [] }
        var device = before
        Device1.apply(changed, invalidated: invalidated, to: &device)
        // bluetoothd 5.66 often omits PropertiesChanged(Connected=true)
        // (docs/simulator.md, "Fidelity"), but resolved services imply a
        // connection; and services are never resolved without one.
        if changed["ServicesResolved"]?.bool == true { device.connected = true }
        if !device.connected { device.servicesResolved = false }
        if device.connected && !before.connected { device.lastDisconnectReason = nil }
        devices[path] = device

        var changes: [TreeChange] = [.deviceChanged(path, Array(changed.keys) + invalidated)]
        if device.connected && !before.connected { changes.append(.deviceConnected(path)) }
        if device.servicesResolved && !before.servicesResolved { changes.append(.servicesResolved(path)) }
        if !device.connected && before.connected {
            changes.append(.deviceDisconnected(path, reason: device.lastDisconnectReason))
        }
        return changes
    }
}

extension Optional {
    /// Runs `body` on the wrapped value in place (a dictionary entry is
    /// modified without a copy); nothing when nil.
    mutating func modify(_ body: (inout Wrapped) -> Void) {
        guard case .some(var wrapped) = self else { return }
        self = nil
        body(&wrapped)
        self = .some(wrapped)
    }
}
