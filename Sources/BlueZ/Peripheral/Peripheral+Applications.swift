import AsyncPrimitives
import DBus

/// A published application as the API shows it.
public struct PublishedApplication: Sendable, Hashable {
    public var id: String
    public var adapter: String
    public var definition: GATTApplication
    /// Whether bluetoothd has it registered now.
    public var registered: Bool
    /// The current value of each characteristic, in definition order
    /// (services, then characteristics).
    public var values: [[UInt8]]
    /// Whether bluetoothd notifies each characteristic (a central subscribed).
    public var notifying: [Bool]
}

extension Peripheral {
    /// Exports `application` and registers it with bluetoothd on `adapter`
    /// (the first one when nil). Returns its id. bluetoothd's refusal is
    /// thrown and nothing stays exported.
    public func publish(_ application: GATTApplication, adapter: String? = nil) async throws(BlueZError) -> String {
        try application.validate()
        let (adapterID, adapterPath) = try adapterPath(adapter)
        let record = try state.withLock { state throws(BlueZError) -> ApplicationRecord in
            guard !state.stopped else { throw BlueZError(.cancelled, "the peripheral stopped") }
            state.nextApplication += 1
            let id = "app\(state.nextApplication)"
            let record = makeRecord(application, id: id, adapter: adapterID, adapterPath: adapterPath)
            state.applications[id] = record
            return record
        }
        do {
            try await registerApplication(record.id)
        } catch {
            state.withLock { _ = $0.applications.removeValue(forKey: record.id) }
            unexport(record.root)
            throw error
        }
        return record.id
    }

    /// Publishes again an application the gateway published before it
    /// restarted, under its old id, with the values clients had set (by
    /// the characteristic's index in definition order). It is kept even
    /// when bluetoothd cannot register it now (BlueZ not running yet, the
    /// adapter missing): then it is registered when BlueZ becomes
    /// available, and the error is returned. What cannot be restored at all
    /// (an id or adapter the gateway would not have given, a definition
    /// that is not valid, an id in use, a stopped peripheral) is thrown, and
    /// nothing is kept. Ids given later continue after the restored ones.
    public func restore(_ application: GATTApplication, id: String, adapter: String, values: [Int: [UInt8]] = [:])
        async throws(BlueZError) -> BlueZError?
    {
        try Self.checkRestored(id: id, prefix: "app", adapter: adapter)
        try application.validate()
        try state.withLock { state throws(BlueZError) in
            guard !state.stopped else { throw BlueZError(.cancelled, "the peripheral stopped") }
            guard state.applications[id] == nil else { throw BlueZError(.alreadyExists, "application \(id) exists") }
            if let number = Self.number(id, prefix: "app") { state.nextApplication = max(state.nextApplication, number) }
            state.applications[id] = makeRecord(
                application, id: id, adapter: adapter, adapterPath: ObjectPath(unchecked: "/org/bluez/" + adapter),
                values: values)
        }
        do throws(BlueZError) {
            try await registerApplication(id)
            return nil
        } catch {
            unexport(ObjectPath(unchecked: options.root.rawValue + "/" + id))
            return error
        }
    }

    /// An application's record: its objects under the peripheral's root,
    /// each characteristic with its initial value, or the one in `values`
    /// (by the characteristic's index in definition order).
    private func makeRecord(
        _ application: GATTApplication, id: String, adapter: String, adapterPath: ObjectPath, values: [Int: [UInt8]] = [:]
    ) -> ApplicationRecord {
        let root = ObjectPath(unchecked: options.root.rawValue + "/" + id)
        var characteristics: [CharacteristicRecord] = []
        for (s, service) in application.services.enumerated() {
            for (c, characteristic) in service.characteristics.enumerated() {
                characteristics.append(
                    CharacteristicRecord(
                        path: ObjectPath(unchecked: "\(root.rawValue)/service\(s)/char\(c)"), service: s,
                        definition: characteristic, value: values[characteristics.count] ?? characteristic.value))
            }
        }
        return ApplicationRecord(
            id: id, adapter: adapter, adapterPath: adapterPath, root: root, definition: application,
            characteristics: characteristics)
    }

    /// The number at the end of an id the peripheral gave (`app12` is 12).
    static func number(_ id: String, prefix: String) -> Int? {
        let digits = id.dropFirst(prefix.count)
        guard id.hasPrefix(prefix), (1...18).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int(digits)
    }

    /// Checks what a restore was given (read back from the state store,
    /// which a hand edit or a damaged disk can change): an id of the form
    /// the gateway gives (`app7`, `adv3`) and an adapter name, each one
    /// element of a D-Bus object path, which libdbus would otherwise abort
    /// the process on.
    static func checkRestored(id: String, prefix: String, adapter: String) throws(BlueZError) {
        guard number(id, prefix: prefix) != nil else {
            throw BlueZError(.invalidArguments, "\(String(reflecting: id)) is not an id the gateway gives (\(prefix)1, \(prefix)2, …)")
        }
        guard (try? ObjectPath.root.appending(adapter)) != nil else {
            throw BlueZError(.invalidArguments, "\(String(reflecting: adapter)) is not an adapter name")
        }
    }

    /// The index, in definition order (services, then characteristics),
    /// of a characteristic of a published application: what a stored
    /// value is kept under.
    public func characteristicIndex(of characteristic: BluetoothUUID, service: BluetoothUUID? = nil, in application: String)
        throws(BlueZError) -> Int
    {
        try state.withLock { state throws(BlueZError) in
            try state.application(application).characteristicIndex(characteristic, service: service)
        }
    }

    /// Unregisters and unexports an application. Returns whether
    /// bluetoothd acknowledged the unregistration (it is gone either way).
    @discardableResult
    public func removeApplication(_ id: String) async throws(BlueZError) -> Bool {
        guard let record = state.withLock({ $0.applications.removeValue(forKey: id) }) else {
            throw BlueZError(.notFound, "no application \(id)")
        }
        var unregistered = false
        if record.registered {
            unregistered = (try? await callBluetoothd(
                record.adapterPath, PeripheralManagers.gattManager, "UnregisterApplication", [.objectPath(record.root)])) != nil
        }
        unexport(record.root)
        let waiting = state.withLock { state -> [Promise<Void, BlueZError>] in
            var waiting: [Promise<Void, BlueZError>] = []
            for characteristic in record.characteristics {
                waiting += state.confirmations.removeValue(forKey: characteristic.path) ?? []
            }
            return waiting
        }
        for promise in waiting { promise.resolve(.success(())) }
        return unregistered
    }

    /// The published applications.
    public func applications() -> [PublishedApplication] {
        state.withLock { state in state.applications.values.sorted { $0.id.count == $1.id.count ? $0.id < $1.id : $0.id.count < $1.id.count }.map(Self.snapshot) }
    }

    /// One published application.
    public func application(_ id: String) throws(BlueZError) -> PublishedApplication {
        try state.withLock { state throws(BlueZError) in Self.snapshot(try state.application(id)) }
    }

    static func snapshot(_ record: ApplicationRecord) -> PublishedApplication {
        PublishedApplication(
            id: record.id, adapter: record.adapter, definition: record.definition, registered: record.registered,
            values: record.characteristics.map(\.value), notifying: record.characteristics.map(\.notifying))
    }

    /// The stored value of a characteristic.
    public func value(of characteristic: BluetoothUUID, service: BluetoothUUID? = nil, in application: String)
        throws(BlueZError) -> [UInt8]
    {
        try state.withLock { state throws(BlueZError) in
            let record = try state.application(application)
            return record.characteristics[try record.characteristicIndex(characteristic, service: service)].value
        }
    }

    /// Stores a characteristic's value; when centrals subscribed, notifies
    /// them (a `PropertiesChanged` on `Value`, which bluetoothd turns into
    /// notifications or indications). Indications return once bluetoothd
    /// reports the central's confirmation (`Confirm`); one that is not
    /// confirmed in time is `.timeout`. Returns whether centrals were told.
    @discardableResult
    public func setValue(
        _ value: [UInt8], of characteristic: BluetoothUUID, service: BluetoothUUID? = nil, in application: String
    ) async throws(BlueZError) -> Bool {
        let (path, notifying, indicates, confirmation) = try state.withLock {
            state throws(BlueZError) -> (ObjectPath, Bool, Bool, Promise<Void, BlueZError>?) in
            let record = try state.application(application)
            let index = try record.characteristicIndex(characteristic, service: service)
            state.applications[application]?.characteristics[index].value = value
            let entry = record.characteristics[index]
            let indicates = entry.definition.indicates && !entry.definition.notifies
            var confirmation: Promise<Void, BlueZError>?
            if entry.notifying, indicates {
                let promise = Promise<Void, BlueZError>()
                state.confirmations[entry.path, default: []].append(promise)
                confirmation = promise
            }
            return (entry.path, entry.notifying && record.registered, indicates, confirmation)
        }
        guard notifying else {
            if let confirmation { _ = confirmation.resolve(.success(())) }
            return false
        }
        do {
            try central.connection.objects.update(["Value": .bytes(value)], of: LocalGATT.characteristic, at: path)
        } catch {
            throw BlueZError.wrapping(error)
        }
        if indicates, let confirmation {
            let timeout = BlueZError(.timeout, "no central confirmed the indication in time")
            let outcome = await confirmation.wait(
                deadline: .now + options.confirmationTimeout, timeout: timeout,
                cancelled: BlueZError(.cancelled, "the indication was cancelled"))
            state.withLock { state in state.confirmations[path]?.removeAll { $0 === confirmation } }
            try outcome.get()
        }
        return true
    }

    /// Exports the application's objects on the current connection and
    /// calls `RegisterApplication`.
    func registerApplication(_ id: String) async throws(BlueZError) {
        guard var record = state.withLock({ $0.applications[id] }) else { return }
        record.adapterPath = try adapterPath(record.adapter).path
        state.withLock { [record] in $0.applications[id]?.adapterPath = record.adapterPath }
        let objects = central.connection.objects
        do {
            try export(record, on: objects)
        } catch {
            throw BlueZError.wrapping(error)
        }
        try await callBluetoothd(
            record.adapterPath, PeripheralManagers.gattManager, "RegisterApplication",
            [.objectPath(record.root), .vardict([:])])
        state.withLock { state in
            state.applications[id]?.registered = true
            state.applications[id]?.seen = []
        }
    }

    func unexport(_ root: ObjectPath) {
        let objects = central.connection.objects
        for path in objects.paths(under: root).sorted(by: { $0.rawValue.count > $1.rawValue.count }) {
            objects.remove(at: path)
        }
        objects.removeObjectManager(at: root)
    }
}
