import DBus

// GattManager1 and LEAdvertisingManager1 as bluetoothd 5.66 serves them
// (src/gatt-database.c, src/advertising.c), and a simulated remote central
// that uses the registered applications as a phone would.

extension SimulatorCore {
    static let objectManager: InterfaceName = "org.freedesktop.DBus.ObjectManager"
    static let propertiesInterface: InterfaceName = "org.freedesktop.DBus.Properties"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"

    // MARK: GattManager1

    /// Reads the application's objects with GetManagedObjects, as
    /// bluetoothd does before it answers, and refuses what it refuses: a
    /// second registration of the same object, no service, an unknown
    /// characteristic flag, a characteristic outside the application's
    /// services.
    func registerApplication(adapter: ObjectPath, _ root: ObjectPath, sender: BusName?) async throws {
        let owner = sender ?? BusName(unchecked: ":0.0")
        let key = PeripheralRegistry.Key(owner: owner, path: root)
        guard adapters.values.contains(where: { $0.path == adapter }) else { throw BluetoothdError.doesNotExist }
        guard peripheral.applications[key] == nil else { throw BluetoothdError.alreadyExists }
        let reply: [Value]
        do {
            reply = try await bus.call(
                destination: owner, path: root, interface: Self.objectManager, method: "GetManagedObjects",
                timeout: .seconds(10))
        } catch {
            throw BluetoothdError.failed("Failed to read application objects")
        }
        var services: [ObjectPath: GATTUUID] = [:]
        var characteristics: [(ObjectPath, [String: Value])] = []
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath, path.isDescendant(ofOrEqualTo: root) else { continue }
            for interface in entry.value.dictionaryEntries ?? [] {
                let properties = interface.value.vardict ?? [:]
                switch interface.key.string {
                case "org.bluez.GattService1":
                    guard let uuid = properties["UUID"]?.string.flatMap(GATTUUID.init) else {
                        throw BluetoothdError.failed("Failed to create entry in database")
                    }
                    services[path] = uuid
                case "org.bluez.GattCharacteristic1":
                    characteristics.append((path, properties))
                default: break
                }
            }
        }
        guard !services.isEmpty else { throw BluetoothdError.failed("No valid service object found") }
        var parsed: [PeripheralRegistry.Characteristic] = []
        for (path, properties) in characteristics {
            guard let uuid = properties["UUID"]?.string.flatMap(GATTUUID.init),
                let servicePath = properties["Service"]?.objectPath, let service = services[servicePath],
                let flags = properties["Flags"]?.strings, !flags.isEmpty,
                flags.allSatisfy(PeripheralRegistry.characteristicFlags.contains)
            else { throw BluetoothdError.failed("Failed to create entry in database") }
            parsed.append(.init(path: path, uuid: uuid, service: service, flags: flags))
        }
        peripheral.applications[key] = .init(adapter: adapter, characteristics: parsed)
    }

    func unregisterApplication(adapter: ObjectPath, _ root: ObjectPath, sender: BusName?) throws(DBusError) {
        let key = PeripheralRegistry.Key(owner: sender ?? BusName(unchecked: ":0.0"), path: root)
        guard peripheral.applications.removeValue(forKey: key) != nil else { throw BluetoothdError.doesNotExist }
        for (subscribed, subscription) in peripheral.subscriptions where subscribed.owner == key.owner
            && subscribed.path.isDescendant(ofOrEqualTo: root)
        {
            subscription.cancel()
            peripheral.subscriptions[subscribed] = nil
        }
    }

    // MARK: LEAdvertisingManager1

    /// Reads the advertisement's properties and refuses what bluetoothd
    /// and the controller refuse: a second registration, more than
    /// `SupportedInstances`, data longer than 31 bytes.
    func registerAdvertisement(adapter: ObjectPath, _ path: ObjectPath, sender: BusName?) async throws {
        let owner = sender ?? BusName(unchecked: ":0.0")
        let key = PeripheralRegistry.Key(owner: owner, path: path)
        guard adapters.values.contains(where: { $0.path == adapter }) else { throw BluetoothdError.doesNotExist }
        guard peripheral.advertisements[key] == nil else { throw BluetoothdError.alreadyExists }
        let active = peripheral.advertisements.values.filter { $0.adapter == adapter }.count
        guard active < PeripheralRegistry.supportedInstances else {
            throw BluetoothdError.notPermitted("Maximum advertisements reached")
        }
        let properties: [String: Value]
        do {
            let reply = try await bus.call(
                destination: owner, path: path, interface: Self.propertiesInterface, method: "GetAll",
                arguments: [.string(Self.advertisementInterface)], timeout: .seconds(10))
            properties = reply.first?.vardict ?? [:]
        } catch {
            throw BluetoothdError.failed("Failed to parse advertisement.")
        }
        guard let type = properties["Type"]?.string, type == "peripheral" || type == "broadcast" else {
            throw BluetoothdError.failed("Failed to parse advertisement.")
        }
        // The kernel refuses advertising data that does not fit; bluetoothd
        // then answers the registration with this generic failure.
        guard Self.advertisingDataLength(properties) <= 31 else {
            throw BluetoothdError.failed("Failed to register advertisement")
        }
        guard peripheral.advertisements[key] == nil else { throw BluetoothdError.alreadyExists }
        peripheral.advertisements[key] = .init(adapter: adapter, properties: properties)
        updateActiveInstances(adapter)
    }

    func unregisterAdvertisement(adapter: ObjectPath, _ path: ObjectPath, sender: BusName?) throws(DBusError) {
        let key = PeripheralRegistry.Key(owner: sender ?? BusName(unchecked: ":0.0"), path: path)
        guard peripheral.advertisements.removeValue(forKey: key) != nil else { throw BluetoothdError.doesNotExist }
        updateActiveInstances(adapter)
    }

    private func updateActiveInstances(_ adapter: ObjectPath) {
        let active = peripheral.advertisements.values.filter { $0.adapter == adapter }.count
        try? bus.objects.update(
            ["ActiveInstances": .byte(UInt8(active))], of: "org.bluez.LEAdvertisingManager1", at: adapter)
    }

    /// The length of the advertising data bluetoothd would build: Flags,
    /// service UUIDs, manufacturer and service data, appearance, TX power.
    static func advertisingDataLength(_ properties: [String: Value]) -> Int {
        func uuidLength(_ text: String) -> Int { text.count <= 4 || (text.count == 36 && text.hasSuffix("-0000-1000-8000-00805f9b34fb") && text.hasPrefix("0000")) ? 2 : 16 }
        var length = 3
        let uuids = properties["ServiceUUIDs"]?.strings ?? []
        let short = uuids.filter { uuidLength($0.lowercased()) == 2 }.count
        if short > 0 { length += 2 + 2 * short }
        if uuids.count > short { length += 2 + 16 * (uuids.count - short) }
        for entry in properties["ManufacturerData"]?.dictionaryEntries ?? [] {
            length += 4 + (entry.value.bytes?.count ?? 0)
        }
        for entry in properties["ServiceData"]?.dictionaryEntries ?? [] {
            length += 2 + uuidLength(entry.key.string?.lowercased() ?? "") + (entry.value.bytes?.count ?? 0)
        }
        if properties["Appearance"] != nil { length += 4 }
        if properties["Includes"]?.strings?.contains("tx-power") == true { length += 3 }
        return length
    }

    /// A client left the bus: its applications and advertisements go.
    func peripheralClientLeft(_ client: BusName) {
        for key in peripheral.applications.keys where key.owner == client {
            try? unregisterApplication(adapter: .root, key.path, sender: client)
        }
        for (key, advertisement) in peripheral.advertisements where key.owner == client {
            try? unregisterAdvertisement(adapter: advertisement.adapter, key.path, sender: client)
        }
    }

    // MARK: The simulated remote central

    /// The registered characteristic `uuid` on `adapter` (the newest
    /// registration when several applications have it).
    func registeredCharacteristic(adapter id: String, _ uuid: GATTUUID) throws(SimulatorError)
        -> (PeripheralRegistry.Key, PeripheralRegistry.Characteristic)
    {
        guard let adapter = adapters[id] else { throw SimulatorError("no adapter \(id)") }
        for (key, application) in peripheral.applications where application.adapter == adapter.path {
            if let characteristic = application.characteristics.first(where: { $0.uuid == uuid }) {
                return (PeripheralRegistry.Key(owner: key.owner, path: characteristic.path), characteristic)
            }
        }
        throw SimulatorError("no application registered on \(id) has characteristic \(uuid)")
    }

    /// The central's link to `adapter` is up (it connects before its first
    /// request): bluetoothd then has a device object for it, `Connected`.
    func centralLinkUp(adapter id: String) {
        guard peripheral.centralLinks[id]?.connected != true, let interfaces,
            let address = DeviceAddress(PeripheralRegistry.centralAddress),
            let path = ObjectPath(rawValue: "/org/bluez/\(id)/\(address.pathComponent)")
        else { return }
        if peripheral.centralLinks[id] == nil {
            let device = DeviceState(
                spec: Scenario.Device(address: address, addressType: .public, adapter: id), adapter: id, path: path)
            device.connected = true
            try? bus.objects.add(interfaces.device, at: path, properties: deviceProperties(device))
        } else {
            try? bus.objects.update(["Connected": .boolean(true)], of: "org.bluez.Device1", at: path)
        }
        peripheral.centralLinks[id] = (path, true)
    }

    /// The central's link to `adapter` goes down, as bluetoothd sees it
    /// (`att_disconnected` in src/gatt-database.c): its subscriptions end,
    /// so each characteristic it was the last subscriber of gets
    /// `StopNotify`; then `Connected` turns false.
    func centralDisconnect(adapter id: String) async throws {
        guard let link = peripheral.centralLinks[id], link.connected else { return }
        guard let adapter = adapters[id] else { throw SimulatorError("no adapter \(id)") }
        for (key, subscription) in peripheral.subscriptions {
            let onAdapter = peripheral.applications.contains { application in
                application.key.owner == key.owner && application.value.adapter == adapter.path
                    && application.value.characteristics.contains { $0.path == key.path }
            }
            guard onAdapter else { continue }
            subscription.cancel()
            peripheral.subscriptions[key] = nil
            _ = try? await callApplication(key, "StopNotify", [], permissionError: 0x03)
        }
        peripheral.centralLinks[id] = (link.path, false)
        try? bus.objects.update(["Connected": .boolean(false)], of: "org.bluez.Device1", at: link.path)
    }

    /// The options bluetoothd passes with a central's request.
    func centralOptions(adapter id: String, extra: [String: Value] = [:]) -> [String: Value] {
        let device = "/org/bluez/\(id)/dev_" + PeripheralRegistry.centralAddress.split(separator: ":").joined(separator: "_")
        return ["device": .objectPath(ObjectPath(unchecked: device)), "mtu": .uint16(517), "link": .string("LE")]
            .merging(extra) { $1 }
    }

    func centralRead(adapter: String, _ uuid: GATTUUID) async throws -> [UInt8] {
        let (key, characteristic) = try registeredCharacteristic(adapter: adapter, uuid)
        centralLinkUp(adapter: adapter)
        // bluetoothd answers from the attribute's permissions before it
        // asks the application.
        guard characteristic.flags.contains(where: { $0.hasSuffix("read") }) else {
            throw CentralATTError(code: ATTError.readNotPermitted)
        }
        let reply = try await callApplication(
            key, "ReadValue", [.vardict(centralOptions(adapter: adapter, extra: ["offset": .uint16(0)]))],
            permissionError: 0x02)
        return reply.first?.bytes ?? []
    }

    func centralWrite(adapter: String, _ uuid: GATTUUID, _ value: [UInt8]) async throws {
        let (key, characteristic) = try registeredCharacteristic(adapter: adapter, uuid)
        centralLinkUp(adapter: adapter)
        guard characteristic.flags.contains(where: { $0.contains("write") }) else {
            throw CentralATTError(code: ATTError.writeNotPermitted)
        }
        _ = try await callApplication(
            key, "WriteValue",
            [.bytes(value), .vardict(centralOptions(adapter: adapter, extra: ["offset": .uint16(0), "type": .string("request")]))],
            permissionError: 0x03)
    }

    /// Writes the characteristic's CCC descriptor: bluetoothd follows the
    /// characteristic's PropertiesChanged on Value from then on, sends each
    /// value to the central, and calls Confirm for indications.
    func centralSubscribe(adapter: String, _ uuid: GATTUUID) async throws {
        let (key, characteristic) = try registeredCharacteristic(adapter: adapter, uuid)
        centralLinkUp(adapter: adapter)
        // Without notify or indicate there is no CCC descriptor to write.
        guard characteristic.flags.contains(where: { $0.hasSuffix("notify") || $0.hasSuffix("indicate") }) else {
            throw CentralATTError(code: ATTError.requestNotSupported)
        }
        guard peripheral.subscriptions[key] == nil else { return }
        let rule = MatchRule(
            sender: key.owner, interface: Self.propertiesInterface, member: "PropertiesChanged", path: key.path)
        let subscription = try await bus.addSignalHandler(matching: rule) { [weak self] message in
            guard message.body.first?.string == "org.bluez.GattCharacteristic1",
                let value = message.body.dropFirst().first?.vardict?["Value"]?.bytes
            else { return }
            Task { await self?.centralReceived(key, value, confirm: characteristic.indicates) }
        }
        peripheral.subscriptions[key] = subscription
        peripheral.received[key] = peripheral.received[key] ?? []
        _ = try await callApplication(key, "StartNotify", [], permissionError: 0x03)
    }

    func centralUnsubscribe(adapter: String, _ uuid: GATTUUID) async throws {
        let (key, _) = try registeredCharacteristic(adapter: adapter, uuid)
        guard let subscription = peripheral.subscriptions.removeValue(forKey: key) else { return }
        subscription.cancel()
        _ = try await callApplication(key, "StopNotify", [], permissionError: 0x03)
    }

    func centralReceivedValues(adapter: String, _ uuid: GATTUUID) throws(SimulatorError) -> [[UInt8]] {
        let (key, _) = try registeredCharacteristic(adapter: adapter, uuid)
        return peripheral.received[key] ?? []
    }

    private func centralReceived(_ key: PeripheralRegistry.Key, _ value: [UInt8], confirm: Bool) async {
        guard peripheral.subscriptions[key] != nil else { return }
        peripheral.received[key, default: []].append(value)
        if confirm { _ = try? await callApplication(key, "Confirm", [], permissionError: 0x03) }
    }

    /// Calls a method of a registered characteristic; a D-Bus error from
    /// the application becomes the ATT error bluetoothd would send the
    /// central (`dbus_error_to_att_ecode` in src/gatt-database.c).
    private func callApplication(
        _ key: PeripheralRegistry.Key, _ method: MemberName, _ arguments: [Value], permissionError: UInt8
    ) async throws -> [Value] {
        do {
            return try await bus.call(
                destination: key.owner, path: key.path, interface: "org.bluez.GattCharacteristic1", method: method,
                arguments: arguments, timeout: .seconds(30))
        } catch let error as DBusError {
            throw CentralATTError(code: Self.attCode(error, permissionError: permissionError))
        }
    }

    static func attCode(_ error: DBusError, permissionError: UInt8) -> UInt8 {
        switch error.name.rawValue {
        case "org.bluez.Error.Failed":
            guard error.message.hasPrefix("0x"), let code = UInt8(error.message.dropFirst(2), radix: 16) else { return 0x80 }
            return (0x80...0x9f).contains(code) ? code : ATTError.unlikelyError
        case "org.bluez.Error.NotSupported": return ATTError.requestNotSupported
        case "org.bluez.Error.NotAuthorized": return ATTError.insufficientAuthorization
        case "org.bluez.Error.InvalidValueLength": return ATTError.invalidAttributeValueLength
        case "org.bluez.Error.InvalidOffset": return ATTError.invalidOffset
        case "org.bluez.Error.NotPermitted": return permissionError
        default: return ATTError.unlikelyError
        }
    }
}

/// The ATT error a GATT application made bluetoothd send to the simulated
/// central.
public struct CentralATTError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: UInt8
    public init(code: UInt8) { self.code = code }
    public var description: String { "0x" + (code < 0x10 ? "0" : "") + String(code, radix: 16) }
}
