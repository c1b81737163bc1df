import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the API (see openapi.yaml's components).
enum ModelJSON {
    /// An adapter; with `slots`, its connection slots as well
    /// (`connection_slots`: limit, used, free, queued).
    static func adapter(_ adapter: Adapter, slots: AdapterSlots?) -> JSON {
        var members: [(String, JSON)] = [("name", .string(adapter.id))]
        members.append(("address", adapter.address.map { .string($0.description) } ?? .null))
        if let alias = adapter.alias { members.append(("alias", .string(alias))) }
        members += [
            ("powered", .bool(adapter.powered)),
            ("discovering", .bool(adapter.discovering)),
            ("discoverable", .bool(adapter.discoverable)),
            ("pairable", .bool(adapter.pairable)),
            ("state", .string(adapter.state.rawValue)),
        ]
        if let slots { members.append(("connection_slots", slots.json())) }
        return .object(members)
    }

    static func device(_ device: Device, encoding: ByteEncoding) -> JSON {
        let advertisement = device.advertisement
        var members: [(String, JSON)] = [
            ("address", .string(device.address.description)),
            ("address_type", .string(device.addressType.rawValue)),
            ("adapter", .string(device.adapter)),
        ]
        if let name = advertisement.localName { members.append(("name", .string(name))) }
        if let alias = device.alias { members.append(("alias", .string(alias))) }
        if let rssi = advertisement.rssi { members.append(("rssi", .int(Int(rssi)))) }
        if let txPower = advertisement.txPower { members.append(("tx_power", .int(Int(txPower)))) }
        if let appearance = advertisement.appearance { members.append(("appearance", .int(Int(appearance)))) }
        if let icon = device.icon { members.append(("icon", .string(icon))) }
        members.append(("service_uuids", .array(advertisement.serviceUUIDs.map { .string($0.uuidString) })))
        var manufacturer: [(String, JSON)] = []
        for company in advertisement.manufacturerData.keys.sorted() {
            let value = advertisement.manufacturerData[company] ?? []
            var entry: [(String, JSON)] = [("company_id", .int(Int(company.rawValue)))]
            if let name = company.name { entry.append(("company", .string(name))) }
            entry += encoding.members(value)
            manufacturer.append((company.description.lowercased(), .object(entry)))
        }
        members.append(("manufacturer_data", .object(manufacturer)))
        var serviceData: [(String, JSON)] = []
        for uuid in advertisement.serviceData.keys.sorted(by: { $0.uuidString < $1.uuidString }) {
            let value = advertisement.serviceData[uuid] ?? []
            var entry: [(String, JSON)] = [("uuid", .string(uuid.uuidString))]
            if let name = uuid.name { entry.append(("name", .string(name))) }
            entry += encoding.members(value)
            serviceData.append((uuid.uuidString, .object(entry)))
        }
        members.append(("service_data", .object(serviceData)))
        if let flags = advertisement.flags {
            members.append(("advertising_flags", .string(ByteEncoding.hex(flags))))
        }
        members += advertisementDetails(device)
        members += [
            ("connected", .bool(device.connected)),
            ("paired", .bool(device.paired)),
            ("bonded", .bool(device.bonded)),
            ("trusted", .bool(device.trusted)),
            ("blocked", .bool(device.blocked)),
            ("services_resolved", .bool(device.servicesResolved)),
        ]
        if let mtu = device.mtu { members.append(("mtu", .int(Int(mtu)))) }
        return .object(members)
    }

    /// A service; `database`, the device's services, names its includes.
    static func service(_ service: GATTService) -> JSON {
        var members: [(String, JSON)] = [("uuid", .string(service.uuid.uuidString))]
        if let name = service.uuid.name(as: .service) ?? service.uuid.name { members.append(("name", .string(name))) }
        members += [
            ("primary", .bool(service.primary)),
            ("handle", .int(Int(service.handle ?? 0))),
            ("includes", .array(includes(of: service))),
            ("characteristics", .array(service.characteristics.map { characteristic($0, service: service.uuid) })),
        ]
        return .object(members)
    }

    static func characteristic(_ characteristic: GATTCharacteristic, service: BluetoothUUID) -> JSON {
        var members: [(String, JSON)] = [("uuid", .string(characteristic.uuid.uuidString))]
        if let name = characteristic.uuid.name(as: .characteristic) ?? characteristic.uuid.name {
            members.append(("name", .string(name)))
        }
        members += [
            ("handle", .int(Int(characteristic.handle ?? 0))),
            ("service", .string(service.uuidString)),
            ("flags", .array((characteristic.properties.bluezFlags + characteristic.unknownFlags).map(JSON.string))),
        ]
        if let mtu = characteristic.mtu { members.append(("mtu", .int(Int(mtu)))) }
        members.append(("notifying", .bool(characteristic.notifying)))
        members.append(("descriptors", .array(characteristic.descriptors.map(descriptor))))
        return .object(members)
    }

    static func descriptor(_ descriptor: GATTDescriptor) -> JSON {
        var members: [(String, JSON)] = [("uuid", .string(descriptor.uuid.uuidString))]
        if let name = descriptor.uuid.name(as: .descriptor) ?? descriptor.uuid.name {
            members.append(("name", .string(name)))
        }
        members += [
            ("handle", .int(Int(descriptor.handle ?? 0))),
            ("flags", .array((descriptor.flags.bluezFlags + descriptor.unknownFlags).map(JSON.string))),
        ]
        return .object(members)
    }

    static func value(_ bytes: [UInt8], encoding: ByteEncoding) -> JSON {
        .object(encoding.members(bytes))
    }

    /// The members that say which characteristic gave which value, shared
    /// by `notification` and `characteristic-value` events (without their
    /// `timestamp`, which each places itself).
    static func characteristicValue(_ value: CharacteristicValue, encoding: ByteEncoding) -> [(String, JSON)] {
        var members: [(String, JSON)] = [
            ("address", .string(value.device.description)), ("adapter", .string(value.adapter)),
        ]
        if let service = value.service { members.append(("service", .string(service.uuidString))) }
        members.append(("characteristic", .string(value.characteristic.uuidString)))
        if let handle = value.handle { members.append(("handle", .int(Int(handle)))) }
        return members + encoding.members(value.value)
    }

    /// RFC 3339 with milliseconds, in UTC.
    static func timestamp(_ date: Date) -> JSON {
        .string(Timestamp.iso8601(date))
    }
}
