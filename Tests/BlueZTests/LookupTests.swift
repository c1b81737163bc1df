import DBus
import Testing

@testable import BlueZ

/// Characteristic and descriptor lookup: by UUID, narrowed by service, by
/// handle; several matches are an error listing them.
@Suite struct LookupTests {
    let devicePath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"

    func tree() -> ObjectTree {
        var tree = ObjectTree()
        _ = tree.apply(.interfacesAdded(devicePath, [Device1.interface: ["Address": .string("AA:BB:CC:DD:EE:FF"), "Connected": .boolean(true)]]))
        for (service, uuid, handle) in [("service0010", "180f", 0x10), ("service0020", "180f", 0x20)] {
            let servicePath = ObjectPath(unchecked: devicePath.rawValue + "/" + service)
            _ = tree.apply(.interfacesAdded(servicePath, [GattService1.interface: ["UUID": .string(uuid), "Device": .objectPath(devicePath), "Handle": .uint16(UInt16(handle))]]))
            let characteristicPath = ObjectPath(unchecked: servicePath.rawValue + "/char00\(handle / 16)1")
            _ = tree.apply(.interfacesAdded(characteristicPath, [GattCharacteristic1.interface: ["UUID": .string("2a19"), "Service": .objectPath(servicePath), "Handle": .uint16(UInt16(handle + 1)), "Flags": .strings(["read"])]]))
            for (index, descriptor) in ["2902", "2904"].enumerated() {
                _ = tree.apply(.interfacesAdded(ObjectPath(unchecked: characteristicPath.rawValue + "/desc\(index)"), [GattDescriptor1.interface: ["UUID": .string(descriptor), "Characteristic": .objectPath(characteristicPath), "Handle": .uint16(UInt16(handle + 2 + index))]]))
            }
        }
        _ = tree.apply(.interfacesAdded(ObjectPath(unchecked: devicePath.rawValue + "/service0030"), [GattService1.interface: ["UUID": .string("180d"), "Device": .objectPath(devicePath), "Handle": .uint16(0x30)]]))
        return tree
    }

    @Test func aUUIDSharedByTwoCharacteristicsIsAmbiguous() {
        #expect {
            try tree().characteristic(.uuid(BluetoothUUID(uuid16: 0x2a19)), ofDevice: devicePath)
        } throws: { error in
            guard let error = error as? BlueZError else { return false }
            return error.code == .ambiguous && error.candidates.map(\.handle) == [0x11, 0x21]
                && error.candidates.map(\.serviceHandle) == [0x10, 0x20]
        }
    }

    @Test func handleOrServiceDisambiguates() throws {
        let tree = tree()
        #expect(try tree.characteristic(.handle(0x21), ofDevice: devicePath).handle == 0x21)
        // Two services share a UUID here, so the service narrows nothing.
        #expect(throws: BlueZError.self) {
            try tree.characteristic(.uuid(BluetoothUUID(uuid16: 0x2a19), service: BluetoothUUID(uuid16: 0x180f)), ofDevice: devicePath)
        }
        #expect {
            try tree.characteristic(.uuid(BluetoothUUID(uuid16: 0x2a19), service: BluetoothUUID(uuid16: 0x180d)), ofDevice: devicePath)
        } throws: { ($0 as? BlueZError)?.code == .notFound }
    }

    @Test func descriptorsByUUIDWithinTheirCharacteristic() throws {
        let tree = tree()
        let characteristic = try tree.characteristic(.handle(0x11), ofDevice: devicePath)
        #expect(try tree.descriptor(.uuid(BluetoothUUID(uuid16: 0x2904)), of: characteristic).handle == 0x13)
        #expect(try tree.descriptor(.handle(0x12), of: characteristic).uuid == BluetoothUUID(uuid16: 0x2902))
    }

    @Test func servicesSortedByHandleAndFiltered() {
        let tree = tree()
        #expect(tree.gattServices(of: devicePath).compactMap(\.handle) == [0x10, 0x20, 0x30])
        let heartRate = tree.gattServices(of: devicePath, serviceUUIDs: [BluetoothUUID(uuid16: 0x180d)])
        #expect(heartRate.map(\.handle) == [0x30])
        #expect(tree.gattServices(of: devicePath).first?.characteristics.first?.descriptors.count == 2)
    }
}
