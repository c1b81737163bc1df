import DBus

extension Interfaces {
    /// org.bluez.Device1 (doc/org.bluez.Device.rst), the property order of
    /// bluetoothd 5.66's introspection.
    static func device(_ core: SimulatorCore, experimental: Bool) -> ExportedInterface {
        var properties: [ExportedInterface.Property] = [
            .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
            .init("Alias", .string, access: .readWrite) { _, _ in },
            .init("Class", .uint32), .init("Appearance", .uint16), .init("Icon", .string),
            .init("Paired", .boolean), .init("Bonded", .boolean),
            .init("Trusted", .boolean, access: .readWrite) { [weak core] path, value in
                try await entered(core).setTrusted(path, value.bool ?? false)
            },
            .init("Blocked", .boolean, access: .readWrite) { [weak core] path, value in
                try await entered(core).setBlocked(path, value.bool ?? false)
            },
            .init("LegacyPairing", .boolean), .init("RSSI", .int16), .init("Connected", .boolean),
            .init("UUIDs", .array(.string)), .init("Modalias", .string), .init("Adapter", .objectPath),
            .init("ManufacturerData", .dictionary(key: .uint16, value: .variant)),
            .init("ServiceData", .dictionary(key: .string, value: .variant)), .init("TxPower", .int16),
            .init("ServicesResolved", .boolean),
        ]
        if experimental {
            properties += [
                .init("AdvertisingFlags", .array(.byte)),
                .init("AdvertisingData", .dictionary(key: .byte, value: .variant)),
            ]
        }
        properties.append(.init("WakeAllowed", .boolean, access: .readWrite) { _, _ in })
        return ExportedInterface(
            "org.bluez.Device1",
            methods: [
                .init("Disconnect") { [weak core] call in
                    try await entered(core).disconnect(call.path)
                    return []
                },
                .init("Connect") { [weak core] call in
                    try await entered(core).connect(call.path)
                    return []
                },
                .init("ConnectProfile", inputs: [.init("UUID", .string)]) { _ in
                    throw BluetoothdError.notAvailable
                },
                .init("DisconnectProfile", inputs: [.init("UUID", .string)]) { _ in
                    throw BluetoothdError.notSupported
                },
                .init("Pair") { [weak core] call in
                    try await entered(core).pair(call.path, sender: call.sender)
                    return []
                },
                .init("CancelPairing") { [weak core] call in
                    try await entered(core).cancelPairing(call.path)
                    return []
                },
            ],
            properties: properties)
    }

    /// `a{qv}` of manufacturer data, values as `ay` in variants.
    static func manufacturerData(_ data: [UInt16: [UInt8]]) -> Value {
        .dictionary(
            key: .uint16, value: .variant,
            data.keys.sorted().map { DictionaryEntry(.uint16($0), .variant(.bytes(data[$0] ?? []))) })
    }

    /// `a{sv}` of service data, values as `ay` in variants.
    static func serviceData(_ data: [GATTUUID: [UInt8]]) -> Value {
        .dictionary(
            key: .string, value: .variant,
            data.keys.map(\.string).sorted().map { key in
                DictionaryEntry(.string(key), .variant(.bytes(data.first { $0.key.string == key }?.value ?? [])))
            })
    }

    /// `Icon` from the GAP Appearance category (src/dbus-common.c
    /// `gap_appearance_to_icon`).
    static func icon(appearance: UInt16) -> String? {
        switch (appearance & 0xffc0) >> 6 {
        case 0x01: "phone"
        case 0x02: "computer"
        case 0x05: "video-display"
        case 0x0a: "multimedia-player"
        case 0x0b: "scanner"
        case 0x0f:
            switch appearance & 0x3f {
            case 0x01: "input-keyboard"
            case 0x02: "input-mouse"
            case 0x03, 0x04: "input-gaming"
            case 0x05: "input-tablet"
            case 0x08: "scanner"
            default: nil
            }
        default: nil
        }
    }
}
