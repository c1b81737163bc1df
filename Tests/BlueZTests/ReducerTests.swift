import DBus
import Testing

@testable import BlueZ

/// The reducer on hand-made signals: one rule per test.
@Suite struct ReducerTests {
    let adapterPath: ObjectPath = "/org/bluez/hci0"
    let devicePath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    let servicePath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service000a"
    let characteristicPath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service000a/char000b"

    func base() -> ObjectTree {
        var tree = ObjectTree()
        _ = tree.apply(.interfacesAdded(adapterPath, [Adapter1.interface: ["Powered": .boolean(true), "Address": .string("00:11:22:33:44:55")]]))
        _ = tree.apply(
            .interfacesAdded(
                devicePath,
                [
                    Device1.interface: [
                        "Address": .string("AA:BB:CC:DD:EE:FF"), "AddressType": .string("random"),
                        "Adapter": .objectPath(adapterPath), "RSSI": .int16(-60), "Connected": .boolean(false),
                    ]
                ]))
        return tree
    }

    func resolved() -> ObjectTree {
        var tree = base()
        _ = tree.apply(.interfacesAdded(servicePath, [GattService1.interface: ["UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Device": .objectPath(devicePath), "Handle": .uint16(0x0a)]]))
        _ = tree.apply(
            .interfacesAdded(
                characteristicPath,
                [
                    GattCharacteristic1.interface: [
                        "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(servicePath),
                        "Flags": .strings(["notify", "x-future"]), "Handle": .uint16(0x0b), "MTU": .uint16(247),
                    ]
                ]))
        _ = tree.apply(.propertiesChanged(devicePath, Device1.interface, ["ServicesResolved": .boolean(true)], invalidated: []))
        return tree
    }

    @Test func addingADeviceDerivesItsAdapterAndAddress() throws {
        let tree = base()
        let device = try #require(tree.devices[devicePath])
        #expect(device.adapter == "hci0")
        #expect(device.address == (try address("AA:BB:CC:DD:EE:FF")))
        #expect(device.addressType == .random)
        #expect(device.advertisement.rssi == -60)
        #expect(tree.adapters[adapterPath]?.state == .poweredOn)
    }

    @Test func servicesResolvedImpliesConnectedWhenTheConnectedSignalIsMissing() {
        let (tree, changes) = base().applying(
            .propertiesChanged(devicePath, Device1.interface, ["ServicesResolved": .boolean(true)], invalidated: []))
        #expect(tree.devices[devicePath]?.connected == true)
        #expect(changes.contains(.deviceConnected(devicePath)))
        #expect(changes.contains(.servicesResolved(devicePath)))
    }

    @Test func connectReturningMarksTheDeviceConnectedOnce() {
        var tree = base()
        #expect(tree.apply(.connectReturned(devicePath)) == [.deviceConnected(devicePath)])
        #expect(tree.apply(.connectReturned(devicePath)).isEmpty)
        // The late Connected=true changes nothing more.
        let changes = tree.apply(.propertiesChanged(devicePath, Device1.interface, ["Connected": .boolean(true)], invalidated: []))
        #expect(!changes.contains(.deviceConnected(devicePath)))
    }

    @Test func disconnectingClearsServicesResolved() {
        var tree = resolved()
        let changes = tree.apply(.propertiesChanged(devicePath, Device1.interface, ["Connected": .boolean(false)], invalidated: []))
        #expect(tree.devices[devicePath]?.servicesResolved == false)
        #expect(changes.contains(.deviceDisconnected(devicePath, reason: nil)))
    }

    @Test func disconnectReasonFromTheDisconnectedSignal() {
        var tree = resolved()
        _ = tree.apply(.deviceDisconnected(devicePath, reason: "org.bluez.Reason.Remote", message: "Connection terminated by remote user"))
        let changes = tree.apply(.propertiesChanged(devicePath, Device1.interface, ["Connected": .boolean(false)], invalidated: []))
        #expect(changes.contains(.deviceDisconnected(devicePath, reason: "org.bluez.Reason.Remote")))
    }

    @Test func invalidatedRSSIIsRemoved() {
        var tree = base()
        _ = tree.apply(.propertiesChanged(devicePath, Device1.interface, [:], invalidated: ["RSSI"]))
        #expect(tree.devices[devicePath]?.advertisement.rssi == nil)
    }

    @Test func manufacturerAndServiceDataDecode() {
        var tree = base()
        _ = tree.apply(
            .propertiesChanged(
                devicePath, Device1.interface,
                [
                    "ManufacturerData": .dictionary(key: .uint16, value: .variant, [DictionaryEntry(.uint16(0x004c), .variant(.bytes([2, 0x15])))]),
                    "ServiceData": .vardict(["0000feaa-0000-1000-8000-00805f9b34fb": .bytes([0x10])]),
                ], invalidated: []))
        let advertisement = tree.devices[devicePath]?.advertisement
        #expect(advertisement?.manufacturerData[CompanyIdentifier(0x004c)] == [2, 0x15])
        #expect(advertisement?.serviceData[BluetoothUUID(uuid16: 0xfeaa)] == [0x10])
    }

    @Test func characteristicValueIsAChangeAndIsCached() {
        var tree = resolved()
        let changes = tree.apply(.propertiesChanged(characteristicPath, GattCharacteristic1.interface, ["Value": .bytes([6, 72])], invalidated: []))
        #expect(changes == [.characteristicValue(characteristicPath, [6, 72])])
        #expect(tree.characteristics[characteristicPath]?.value == [6, 72])
    }

    @Test func characteristicFlagsKeepUnknownOnes() {
        let tree = resolved()
        let characteristic = tree.characteristics[characteristicPath]
        #expect(characteristic?.properties == [.notify])
        #expect(characteristic?.unknownFlags == ["x-future"])
        #expect(characteristic?.mtu == 247)
        #expect(tree.devicePath(of: characteristicPath) == devicePath)
    }

    @Test func removingTheDeviceReportsItsLastStateAndDisconnection() {
        var tree = resolved()
        let changes = tree.apply(.interfacesRemoved(devicePath, [Device1.interface]))
        #expect(tree.devices[devicePath] == nil)
        #expect(changes.contains(.deviceDisconnected(devicePath, reason: nil)))
        #expect(changes.contains { if case .deviceRemoved(let device) = $0 { device.path == devicePath } else { false } })
    }

    @Test func signalsForUnknownObjectsChangeNothing() {
        let before = base()
        let unknown: ObjectPath = "/org/bluez/hci9/dev_00_00_00_00_00_01"
        let (after, changes) = before.applying(.propertiesChanged(unknown, Device1.interface, ["RSSI": .int16(-1)], invalidated: []))
        #expect(after == before)
        #expect(changes.isEmpty)
        #expect(before.applying(.interfacesRemoved(unknown, [Device1.interface])).1.isEmpty)
    }

    @Test func appliesWithoutTouchingTheOriginal() {
        let before = base()
        let (after, _) = before.applying(.interfacesRemoved(devicePath, [Device1.interface]))
        #expect(before.devices[devicePath] != nil)
        #expect(after.devices[devicePath] == nil)
    }

    @Test func managedObjectsInAnyOrder() {
        let objects: Value = .dictionary(
            key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
            [
                DictionaryEntry(.objectPath(characteristicPath), interfaces(GattCharacteristic1.interface, ["UUID": .string("2a37"), "Service": .objectPath(servicePath)])),
                DictionaryEntry(.objectPath(devicePath), interfaces(Device1.interface, ["Address": .string("AA:BB:CC:DD:EE:FF")])),
                DictionaryEntry(.objectPath(adapterPath), interfaces(Adapter1.interface, ["Powered": .boolean(false)])),
                DictionaryEntry(.objectPath(servicePath), interfaces(GattService1.interface, ["UUID": .string("180d"), "Device": .objectPath(devicePath)])),
            ])
        let tree = ObjectTree(managedObjects: objects)
        #expect(tree.adapters[adapterPath]?.state == .poweredOff)
        #expect(tree.gattServices(of: devicePath).first?.characteristics.first?.uuid == BluetoothUUID(uuid16: 0x2a37))
    }

    func interfaces(_ name: InterfaceName, _ properties: [String: Value]) -> Value {
        .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), [DictionaryEntry(.string(name.rawValue), .vardict(properties))])
    }
}
