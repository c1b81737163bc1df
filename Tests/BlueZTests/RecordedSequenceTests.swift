import DBus
import Testing

@testable import BlueZ

/// The reducer fed a real bluetoothd 5.66 session, recorded in the bluez-vm
/// rig (README, "End-to-end tests") by scripts/record-bluez-signals.sh: discover, connect,
/// resolve services, read, notify, write (one ATT error), disconnect, remove.
@Suite struct RecordedSequenceTests {

    @Test func everyRecordedSignalDecodes() throws {
        let recording = try Recording.load("bluetoothd-5.66-session")
        #expect(recording.signals.count > 60)
        for message in recording.signals {
            #expect(TreeSignal(message) != nil, "undecoded \(message.member?.rawValue ?? "")")
        }
    }

    @Test func replayBuildsTheSessionsStates() throws {
        let recording = try Recording.load("bluetoothd-5.66-session")
        var tree = ObjectTree(managedObjects: recording.managedObjects)
        #expect(tree.adapter(id: "hci0")?.powered == true)
        #expect(tree.device(address: try address("00:AA:01:01:00:01")) == nil)

        var all: [TreeChange] = []
        var resolvedWhileConnectedUnsignalled = false
        for message in recording.signals {
            guard let signal = TreeSignal(message) else { continue }
            let changes = tree.apply(signal)
            all += changes
            if changes.contains(.servicesResolved(devicePath)) {
                // bluetoothd never sent Connected=true for this device (the
                // race the README describes); ServicesResolved implies it.
                resolvedWhileConnectedUnsignalled = tree.devices[devicePath]?.connected == true
                let services = tree.gattServices(of: devicePath)
                #expect(services.map(\.uuid.shortString).contains("180d"))
                let measurement = try tree.characteristic(.uuid(BluetoothUUID(uuid16: 0x2a37)), ofDevice: devicePath)
                #expect(measurement.properties.contains(.notify))
                #expect(measurement.handle == 0x0016)
                #expect(measurement.mtu != nil)
            }
        }
        #expect(resolvedWhileConnectedUnsignalled)
        #expect(all.contains(.deviceAdded(devicePath)))
        #expect(all.contains(.deviceConnected(devicePath)))
        #expect(all.contains(.deviceDisconnected(devicePath, reason: nil)))

        let notifications = all.filter {
            if case .characteristicValue(let path, _) = $0 { path.rawValue.hasSuffix("char0016") } else { false }
        }
        #expect(notifications.count == 3)
        // RemoveDevice took the device and its GATT objects away.
        #expect(tree.devices[devicePath] == nil)
        #expect(tree.characteristics.keys.allSatisfy { !$0.isDescendant(ofOrEqualTo: devicePath) })
        // The peripheral's adapter saw the central connect and disconnect.
        #expect(tree.device(address: try address("00:AA:01:00:00:00"), adapter: "hci1")?.connected == false)
    }

    @Test func advertisementDataOfTheDiscoveredDevice() throws {
        let recording = try Recording.load("bluetoothd-5.66-session")
        var tree = ObjectTree(managedObjects: recording.managedObjects)
        for message in recording.signals {
            guard let signal = TreeSignal(message) else { continue }
            _ = tree.apply(signal)
            if tree.devices[devicePath] != nil { break }
        }
        let device = try #require(tree.devices[devicePath])
        #expect(device.advertisement.localName == "TestAdvertisement")
        #expect(device.advertisement.rssi == 127)
        #expect(device.advertisement.signalStrength == nil)
        #expect(device.advertisement.manufacturerData[CompanyIdentifier(0xffff)] == [0, 1, 2, 3])
        #expect(device.advertisement.serviceData[BluetoothUUID(uuid16: 0x9999)] == [0, 1, 2, 3, 4])
        #expect(Set(device.advertisement.serviceUUIDs) == [BluetoothUUID(uuid16: 0x180d), BluetoothUUID(uuid16: 0x180f)])
        #expect(device.connected == false)
    }

    @Test func recordedATTErrorMapsToPeripheralFailed() throws {
        let recording = try Recording.load("bluetoothd-5.66-session")
        let failure = try recording.entries.compactMap { entry -> BlueZError? in
            guard case .call(_, let name?, let message) = entry else { return nil }
            return BlueZError(dbus: DBusError(try ErrorName(name), message ?? ""))
        }.first
        let error = try #require(failure)
        #expect(error.code == .peripheralFailed)
        #expect(error.attError == 0x80)
        #expect(error.dbusName == "org.bluez.Error.Failed")
        #expect(error.dbusMessage == "Operation failed with ATT error: 0x80")
    }

    @Test func replayingTheSnapshotsSignalsAgainChangesNothing() throws {
        // A rebuild applies the signals queued during GetManagedObjects on
        // top of its reply; signals already reflected must be harmless.
        let recording = try Recording.load("bluetoothd-5.66-session")
        var tree = ObjectTree(managedObjects: recording.managedObjects)
        let signals = recording.signals.compactMap(TreeSignal.init).prefix(40)
        for signal in signals { _ = tree.apply(signal) }
        let once = tree
        for signal in signals { _ = tree.apply(signal) }
        #expect(tree == once)
    }

    var devicePath: ObjectPath { "/org/bluez/hci0/dev_00_AA_01_01_00_01" }
}
