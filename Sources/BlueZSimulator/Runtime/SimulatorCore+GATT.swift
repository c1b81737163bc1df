import DBus

extension SimulatorCore {
    static let characteristicInterface: InterfaceName = "org.bluez.GattCharacteristic1"

    // MARK: Objects

    /// Exports services, characteristics and descriptors, each in its own
    /// InterfacesAdded, parents first (as gatt-client registers them).
    func exportGATT(_ device: DeviceState) {
        guard let interfaces, device.exported else { return }
        let database = device.database
        // An include names a service by UUID: the device's first with it.
        var pathsByUUID: [String: ObjectPath] = [:]
        for service in database.services {
            guard let path = try? device.path.appending(service.component) else { continue }
            if pathsByUUID[service.spec.uuid.string] == nil { pathsByUUID[service.spec.uuid.string] = path }
        }
        for service in database.services {
            guard let servicePath = try? device.path.appending(service.component),
                !bus.objects.contains(servicePath)
            else { continue }
            let includes = service.spec.includes.compactMap { pathsByUUID[$0.string] }
            try? bus.objects.add(
                interfaces.service, at: servicePath,
                properties: [
                    "UUID": .string(service.spec.uuid.string), "Device": .objectPath(device.path),
                    "Primary": .boolean(service.spec.primary), "Includes": .objectPaths(includes),
                ])
            for index in service.characteristics {
                let characteristic = database.characteristics[index]
                guard let path = try? servicePath.appending(characteristic.component) else { continue }
                var properties: [String: Value] = [
                    "UUID": .string(characteristic.spec.uuid.string), "Service": .objectPath(servicePath),
                    "Value": .bytes([]), "Flags": .strings(characteristic.spec.flags), "MTU": .uint16(device.spec.connection.mtu),
                ]
                // As in 5.66: Notifying for notify/indicate, NotifyAcquired
                // for notify, WriteAcquired for write-without-response.
                if characteristic.notifies { properties["Notifying"] = .boolean(false) }
                if characteristic.spec.flags.contains("notify") { properties["NotifyAcquired"] = .boolean(false) }
                if characteristic.spec.flags.contains("write-without-response") {
                    properties["WriteAcquired"] = .boolean(false)
                }
                try? bus.objects.add(interfaces.characteristic, at: path, properties: properties)
                for descriptor in characteristic.descriptors {
                    guard let descriptorPath = try? path.appending(descriptor.component) else { continue }
                    try? bus.objects.add(
                        interfaces.descriptor, at: descriptorPath,
                        properties: [
                            "UUID": .string(descriptor.spec.uuid.string), "Characteristic": .objectPath(path),
                            "Value": .bytes([]),
                        ])
                }
            }
        }
    }

    /// Removes the GATT objects, children before parents.
    func unexportGATT(_ device: DeviceState) {
        let paths = bus.objects.paths(under: device.path).filter { $0 != device.path }
        for path in paths.sorted(by: { $0.rawValue.count > $1.rawValue.count }) { bus.objects.remove(at: path) }
    }

    /// The device and characteristic index behind a characteristic path.
    func characteristic(at path: ObjectPath) throws(DBusError) -> (DeviceState, Int) {
        guard let servicePath = path.parent, let devicePath = servicePath.parent, let device = devices[devicePath],
            let index = device.database.characteristics.firstIndex(where: {
                $0.component == path.lastElement
                    && device.database.services[$0.service].component == servicePath.lastElement
            }), bus.objects.contains(path)
        else { throw DBusError(.unknownObject, "No such object path '\(path)'") }
        return (device, index)
    }

    // MARK: Characteristics

    /// GattCharacteristic1.ReadValue (`characteristic_read_value`).
    func readCharacteristic(_ path: ObjectPath, options: Value) async throws(DBusError) -> [UInt8] {
        let (device, index) = try characteristic(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        let parsed = try GATTOptions(options)
        return try await mergedRead(path, offset: parsed.offset) { () async throws(DBusError) in
            try await secure(device, index)
            try await peripheralAnswers(device)
            switch device.characteristics[index].read(offset: parsed.offset) {
            case .failure(let failure):
                throw BluetoothdError.att(failure.code)
            case .success(let bytes):
                // bluetoothd caches what it read as the Value property and
                // announces it after every read (offset reads patch the cache).
                let cached = bus.objects.property("Value", of: Self.characteristicInterface, at: path)?.bytes ?? []
                let value = Array(cached.prefix(parsed.offset)) + bytes
                try? bus.objects.update(["Value": .bytes(value)], of: Self.characteristicInterface, at: path)
                return bytes
            }
        }
    }

    /// GattCharacteristic1.WriteValue (`characteristic_write_value`): the
    /// procedure follows the `type` option and the flags (request when
    /// `write`, command when only `write-without-response`), otherwise
    /// NotSupported.
    func writeCharacteristic(_ path: ObjectPath, _ bytes: [UInt8], options: Value) async throws(DBusError) {
        let (device, index) = try characteristic(at: path)
        guard device.connected else { throw BluetoothdError.failed("Not connected") }
        // The AcquireWrite socket holds the characteristic's writes.
        if device.acquiredWrite[index] != nil { throw BluetoothdError.notPermitted("Write acquired") }
        try checkNoWriteInFlight(path)
        let parsed = try GATTOptions(options)
        let flags = device.database.characteristics[index].spec.flags
        // The procedure, as characteristic_write_value picks it: reliable
        // or request by flag or by `type`; a command for `type: command`
        // (whatever the flags) or for write-without-response alone; else
        // NotSupported (an unknown `type` too).
        let type = parsed.type?.lowercased()
        let request = (type == nil && (flags.contains("write") || flags.contains("reliable-write")))
            || type == "request" || type == "reliable"
        if !request {
            let command = type == "command" || (type == nil && flags.contains("write-without-response"))
            guard command, parsed.offset == 0 else { throw BluetoothdError.notSupported }
        }
        guard request else {
            try await secure(device, index)
            // A Write Command has no response: the peripheral's verdict is
            // never seen.
            if device.characteristics[index].write(bytes, offset: 0) == nil { echoed(device, index, path) }
            return
        }
        // In flight from the start: raising the security level is part of
        // the request.
        try await exclusiveWrite(path) { () async throws(DBusError) in
            try await secure(device, index)
            try await peripheralAnswers(device)
            // The peripheral refuses a write request on a value it does not
            // let clients write.
            guard flags.contains("write") || flags.contains("reliable-write") || flags.contains("write-without-response")
            else { throw BluetoothdError.att(ATTError.writeNotPermitted) }
            if let code = device.characteristics[index].write(bytes, offset: parsed.offset) {
                throw BluetoothdError.att(code)
            }
            echoed(device, index, path)
        }
    }

    /// An echo characteristic notifies what was written while notifying.
    func echoed(_ device: DeviceState, _ index: Int, _ path: ObjectPath) {
        guard case .echo = device.characteristics[index].spec.behaviour, device.notifySessions[index] != nil else {
            return
        }
        notify(device, index, device.characteristics[index].value)
    }

    /// A characteristic that needs encryption on a link that is not
    /// encrypted: the peripheral answers Insufficient Encryption, and
    /// bluetoothd raises the security level (pairing, Just Works) and
    /// retries; if the peripheral refuses to pair, the error stands
    /// (NotPermitted "Not paired").
    private func secure(_ device: DeviceState, _ index: Int) async throws(DBusError) {
        guard device.database.characteristics[index].spec.encrypted, !device.paired else { return }
        guard device.spec.pairing.accept, !device.pairing else {
            throw BluetoothdError.att(ATTError.insufficientEncryption)
        }
        device.pairing = true
        defer { device.pairing = false }
        do {
            try await bond(device, agent: agent(for: nil))
        } catch {
            throw BluetoothdError.att(ATTError.insufficientEncryption)
        }
    }
}
