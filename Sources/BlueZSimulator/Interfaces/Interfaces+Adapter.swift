import DBus

extension Interfaces {
    static let vardictType = DBusType.dictionary(key: .string, value: .variant)

    /// org.bluez.Adapter1 (doc/org.bluez.Adapter.rst). ConnectDevice is
    /// experimental in 5.66 and absent from a stock daemon.
    static func adapter(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.Adapter1",
            methods: [
                .init("StartDiscovery") { [weak core] call in
                    try await entered(core).startDiscovery(adapter: call.path, client: call.sender)
                    return []
                },
                .init("SetDiscoveryFilter", inputs: [.init("properties", vardictType)]) { [weak core] call in
                    try await entered(core).setDiscoveryFilter(
                        adapter: call.path, client: call.sender, call.arguments[0].vardict ?? [:])
                    return []
                },
                .init("StopDiscovery") { [weak core] call in
                    try await entered(core).stopDiscovery(adapter: call.path, client: call.sender)
                    return []
                },
                .init("RemoveDevice", inputs: [.init("device", .objectPath)]) { [weak core] call in
                    try await entered(core).removeDevice(adapter: call.path, call.arguments[0].objectPathOrRoot)
                    return []
                },
                .init("GetDiscoveryFilters", outputs: [.init("filters", .array(.string))]) { _ in
                    [.strings(["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])]
                },
            ],
            properties: [
                .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
                .init("Alias", .string, access: .readWrite) { [weak core] path, value in
                    try await entered(core).setAdapterAlias(path, value.string ?? "")
                },
                .init("Class", .uint32),
                .init("Powered", .boolean, access: .readWrite) { [weak core] path, value in
                    try await entered(core).setPowered(path, value.bool ?? false)
                },
                .init("Discoverable", .boolean, access: .readWrite) { [weak core] path, _ in
                    try await entered(core).requirePowered(path)
                },
                .init("DiscoverableTimeout", .uint32, access: .readWrite) { _, _ in },
                .init("Pairable", .boolean, access: .readWrite) { _, _ in },
                .init("PairableTimeout", .uint32, access: .readWrite) { _, _ in },
                .init("Discovering", .boolean), .init("UUIDs", .array(.string)), .init("Modalias", .string),
                .init("Roles", .array(.string)), .init("ExperimentalFeatures", .array(.string)),
            ])
    }

    /// The adapter's initial property values, as a stock bluetoothd 5.66
    /// shows them for an LE controller.
    static func adapterProperties(_ adapter: AdapterState) -> [String: Value] {
        let name = adapter.spec.name
        return [
            "Address": .string(adapter.spec.address.description), "AddressType": .string("public"),
            "Name": .string(name), "Alias": .string(adapter.alias ?? name), "Class": .uint32(0),
            "Powered": .boolean(adapter.powered), "Discoverable": .boolean(adapter.spec.discoverable),
            "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(adapter.spec.pairable),
            "PairableTimeout": .uint32(0), "Discovering": .boolean(false),
            // The UUIDs of bluetoothd's own local services (GAP, GATT, Device
            // Information), as the real daemon lists them.
            "UUIDs": .strings([
                "00001801-0000-1000-8000-00805f9b34fb", "00001800-0000-1000-8000-00805f9b34fb",
                "0000180a-0000-1000-8000-00805f9b34fb",
            ]),
            "Modalias": .string("usb:v1D6Bp0246d0542"), "Roles": .strings(["central", "peripheral"]),
        ]
    }

    static let advertisingManagerProperties: [String: Value] = [
        "ActiveInstances": .byte(0), "SupportedInstances": .byte(5),
        "SupportedIncludes": .strings(["tx-power", "appearance", "local-name"]),
    ]
}
