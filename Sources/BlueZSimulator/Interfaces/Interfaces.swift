import DBus

/// The D-Bus interfaces bluetoothd 5.66 serves, as introspected from the
/// real daemon in the VM rig (`busctl introspect org.bluez /org/bluez/hci0`
/// and a device and GATT objects), with handlers that enter the core.
///
/// Interfaces bluetoothd has but the simulator does not serve: Media1,
/// NetworkServer1 (hci0), ProfileManager1's profiles, HealthManager1
/// (/org/bluez), Device1.ConnectProfile/DisconnectProfile's profiles.
struct Interfaces: Sendable {
    let agentManager: ExportedInterface
    let profileManager: ExportedInterface
    let adapter: ExportedInterface
    let gattManager: ExportedInterface
    let advertisingManager: ExportedInterface
    let monitorManager: ExportedInterface
    let device: ExportedInterface
    let service: ExportedInterface
    let characteristic: ExportedInterface
    let descriptor: ExportedInterface

    init(core: SimulatorCore) {
        agentManager = Self.agentManager(core)
        profileManager = Self.profileManager()
        adapter = Self.adapter(core)
        gattManager = Self.gattManager(core)
        advertisingManager = Self.advertisingManager(core)
        monitorManager = Self.monitorManager(core)
        device = Self.device(core, experimental: core.options.experimental)
        service = Self.service()
        characteristic = Self.characteristic(core)
        descriptor = Self.descriptor(core)
    }

    static func agentManager(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.AgentManager1",
            methods: [
                .init("RegisterAgent", inputs: [.init("agent", .objectPath), .init("capability", .string)]) {
                    [weak core] call in
                    try await entered(core).registerAgent(
                        call.arguments[0].objectPathOrRoot, capability: call.arguments[1].string ?? "", sender: call.sender)
                    return []
                },
                .init("UnregisterAgent", inputs: [.init("agent", .objectPath)]) { [weak core] call in
                    try await entered(core).unregisterAgent(call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
                .init("RequestDefaultAgent", inputs: [.init("agent", .objectPath)]) { [weak core] call in
                    try await entered(core).requestDefaultAgent(call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
            ])
    }

    static func profileManager() -> ExportedInterface {
        ExportedInterface(
            "org.bluez.ProfileManager1",
            methods: [
                .init("RegisterProfile", inputs: [.init("profile", .objectPath), .init("UUID", .string), .init("options", .dictionary(key: .string, value: .variant))]) { _ in
                    throw BluetoothdError.notSupported
                },
                .init("UnregisterProfile", inputs: [.init("profile", .objectPath)]) { _ in
                    throw BluetoothdError.doesNotExist
                },
            ])
    }

    static func gattManager(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.GattManager1",
            methods: [
                .init("RegisterApplication", inputs: [.init("application", .objectPath), .init("options", .dictionary(key: .string, value: .variant))]) { [weak core] call in
                    try await entered(core).registerApplication(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
                .init("UnregisterApplication", inputs: [.init("application", .objectPath)]) { [weak core] call in
                    try await entered(core).unregisterApplication(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
            ])
    }

    static func advertisingManager(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.LEAdvertisingManager1",
            methods: [
                .init("RegisterAdvertisement", inputs: [.init("advertisement", .objectPath), .init("options", .dictionary(key: .string, value: .variant))]) { [weak core] call in
                    try await entered(core).registerAdvertisement(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
                .init("UnregisterAdvertisement", inputs: [.init("service", .objectPath)]) { [weak core] call in
                    try await entered(core).unregisterAdvertisement(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
            ],
            properties: [
                .init("ActiveInstances", .byte), .init("SupportedInstances", .byte),
                .init("SupportedIncludes", .array(.string)), .init("SupportedSecondaryChannels", .array(.string)),
            ])
    }

    /// org.bluez.AdvertisementMonitorManager1 (bluetoothd -E only).
    static func monitorManager(_ core: SimulatorCore) -> ExportedInterface {
        ExportedInterface(
            "org.bluez.AdvertisementMonitorManager1",
            methods: [
                .init("RegisterMonitor", inputs: [.init("application", .objectPath)]) { [weak core] call in
                    try await entered(core).registerMonitor(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
                .init("UnregisterMonitor", inputs: [.init("application", .objectPath)]) { [weak core] call in
                    try await entered(core).unregisterMonitor(
                        adapter: call.path, call.arguments[0].objectPathOrRoot, sender: call.sender)
                    return []
                },
            ],
            properties: [.init("SupportedMonitorTypes", .array(.string)), .init("SupportedFeatures", .array(.string))])
    }

    /// As on the VM rig's emulated controllers: no offloading to the controller.
    static let monitorManagerProperties: [String: Value] = [
        "SupportedMonitorTypes": .strings(["or_patterns"]), "SupportedFeatures": .strings([]),
    ]

    /// The core behind a handler, or `Failed` once the simulator is gone.
    static func entered(_ core: SimulatorCore?) throws(DBusError) -> SimulatorCore {
        guard let core else { throw BluetoothdError.failed("bluetoothd is stopping") }
        return core
    }
}

extension Value {
    /// A non-optional object path argument (the server checked the
    /// signature, so a nil here means a malformed call: the root path).
    var objectPathOrRoot: ObjectPath { objectPath ?? .root }
}
