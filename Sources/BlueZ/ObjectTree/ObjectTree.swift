import DBus

/// A mirror of the objects bluetoothd exports under `/org/bluez`: adapters,
/// devices, and the GATT services, characteristics and descriptors of
/// connected devices, as typed records keyed by object path (GATT objects
/// as internal records, `GATTRecords.swift`; callers get snapshots).
///
/// The tree changes only through `apply(_:)` (the reducer), fed the
/// signals of bluetoothd in order, after a `GetManagedObjects` snapshot
/// (`init(managedObjects:)`). It is a value: copies are independent.
struct ObjectTree: Sendable, Hashable {
    var adapters: [ObjectPath: Adapter] = [:]
    var devices: [ObjectPath: Device] = [:]
    var services: [ObjectPath: MirroredService] = [:]
    var characteristics: [ObjectPath: MirroredCharacteristic] = [:]
    var descriptors: [ObjectPath: MirroredDescriptor] = [:]

    init() {}

    /// The tree of a `GetManagedObjects` reply (`a{oa{sa{sv}}}`), with the
    /// objects `scope` includes.
    init(managedObjects: Value, scope: AdapterScope = .all) {
        // Parents first (shorter paths), so that each object finds its
        // parent in place whatever order the reply lists them in.
        let objects = ObjectManager.objects(managedObjects).sorted { $0.0.rawValue.count < $1.0.rawValue.count }
        for (path, interfaces) in objects where scope.includes(path) {
            _ = apply(.interfacesAdded(path, interfaces))
        }
    }

    /// The reducer as a pure function: the tree after `signal`, and what
    /// changed.
    func applying(_ signal: TreeSignal) -> (ObjectTree, [TreeChange]) {
        var tree = self
        let changes = tree.apply(signal)
        return (tree, changes)
    }

    /// The adapter called `id` (`hci0`).
    func adapter(id: String) -> Adapter? {
        adapters.values.first { $0.id == id }
    }

    /// The device with `address`, on `adapter` if given. With no adapter
    /// named, the connected one wins, then the first adapter by name.
    func device(address: BluetoothAddress, adapter: String? = nil) -> Device? {
        var found: Device?
        // A peer heard by several adapters has an object under each: the
        // connected one is the device (GATT lives there), else the first.
        for device in devices.values where device.address == address && (adapter == nil || device.adapter == adapter) {
            guard let current = found else {
                found = device
                continue
            }
            let better =
                device.connected != current.connected ? device.connected : device.adapter < current.adapter
            if better { found = device }
        }
        return found
    }

    /// The path of the device an object belongs to (the object itself if
    /// it is a device).
    func devicePath(of path: ObjectPath) -> ObjectPath? {
        if devices[path] != nil { return path }
        if let characteristic = characteristics[path] { return services[characteristic.servicePath]?.devicePath }
        if let descriptor = descriptors[path] {
            return characteristics[descriptor.characteristicPath].flatMap { services[$0.servicePath]?.devicePath }
        }
        return services[path]?.devicePath
    }
}
