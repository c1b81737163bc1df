import DBus

extension Interfaces {
    /// org.bluez.GattService1 (doc/org.bluez.GattService.rst), client side.
    /// bluetoothd 5.66 has no `Handle` on client-side GATT objects (checked
    /// with the real daemon's introspection), so neither does the simulator.
    static func service() -> ExportedInterface {
        ExportedInterface(
            "org.bluez.GattService1",
            properties: [
                .init("UUID", .string), .init("Device", .objectPath), .init("Primary", .boolean),
                .init("Includes", .array(.objectPath)),
            ])
    }

    /// org.bluez.GattCharacteristic1, with AcquireWrite and AcquireNotify
    /// (socket pairs passed as Unix fds, SimulatorCore+Acquire).
    static func characteristic(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.GattCharacteristic1",
            methods: [
                .init("ReadValue", inputs: [.init("options", vardictType)], outputs: [.init("value", .array(.byte))]) {
                    [weak core] call in
                    [.bytes(try await entered(core).readCharacteristic(call.path, options: call.arguments[0]))]
                },
                .init("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", vardictType)]) {
                    [weak core] call in
                    try await entered(core).writeCharacteristic(
                        call.path, call.arguments[0].bytes ?? [], options: call.arguments[1])
                    return []
                },
                .init("AcquireWrite", inputs: [.init("options", vardictType)], outputs: [.init("fd", .unixFD), .init("mtu", .uint16)]) {
                    [weak core] call in
                    try await entered(core).acquireWrite(call.path, client: call.sender)
                },
                .init("AcquireNotify", inputs: [.init("options", vardictType)], outputs: [.init("fd", .unixFD), .init("mtu", .uint16)]) {
                    [weak core] call in
                    try await entered(core).acquireNotify(call.path, client: call.sender)
                },
                .init("StartNotify") { [weak core] call in
                    try await entered(core).startNotify(call.path, client: call.sender)
                    return []
                },
                .init("StopNotify") { [weak core] call in
                    try await entered(core).stopNotify(call.path, client: call.sender)
                    return []
                },
            ],
            properties: [
                .init("UUID", .string), .init("Service", .objectPath), .init("Value", .array(.byte)),
                .init("Notifying", .boolean), .init("Flags", .array(.string)), .init("WriteAcquired", .boolean),
                .init("NotifyAcquired", .boolean), .init("MTU", .uint16),
            ])
    }

    /// org.bluez.GattDescriptor1.
    static func descriptor(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.GattDescriptor1",
            methods: [
                .init("ReadValue", inputs: [.init("options", vardictType)], outputs: [.init("value", .array(.byte))]) {
                    [weak core] call in
                    [.bytes(try await entered(core).readDescriptor(call.path, options: call.arguments[0]))]
                },
                .init("WriteValue", inputs: [.init("value", .array(.byte)), .init("options", vardictType)]) {
                    [weak core] call in
                    try await entered(core).writeDescriptor(
                        call.path, call.arguments[0].bytes ?? [], options: call.arguments[1])
                    return []
                },
            ],
            properties: [
                .init("UUID", .string), .init("Characteristic", .objectPath), .init("Value", .array(.byte)),
            ])
    }
}
