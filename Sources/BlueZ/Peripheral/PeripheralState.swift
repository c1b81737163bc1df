import AsyncPrimitives
import DBus

/// What a `Peripheral` has published, under its lock.
struct PeripheralState {
    var applications: [String: ApplicationRecord] = [:]
    var advertisements: [String: AdvertisementRecord] = [:]
    var nextApplication = 0
    var nextAdvertisement = 0
    var nextRequest = 0
    /// Delegated requests waiting for their answer, by id.
    var pending: [String: PendingRequest] = [:]
    /// Indications waiting for bluetoothd's `Confirm`, by characteristic path.
    var confirmations: [ObjectPath: [Promise<Void, BlueZError>]] = [:]
    var stopped = false

    /// ATT "Unlikely Error", the answer when nothing better fits.
    static let unlikelyError: UInt8 = 0x0e

    func application(_ id: String) throws(BlueZError) -> ApplicationRecord {
        guard let record = applications[id] else { throw BlueZError(.notFound, "no application \(id)") }
        return record
    }

    /// The application and characteristic index exported at `path`.
    func characteristic(at path: ObjectPath) -> (ApplicationRecord, Int)? {
        for record in applications.values where path.isDescendant(ofOrEqualTo: record.root) {
            if let index = record.characteristics.firstIndex(where: { $0.path == path }) { return (record, index) }
        }
        return nil
    }
}

/// A published application: its definition, where it is exported, and
/// the live values of its characteristics.
struct ApplicationRecord: Sendable {
    let id: String
    let adapter: String
    /// Resolved again at each registration: a restored application may
    /// be defined before BlueZ lists its adapter.
    var adapterPath: ObjectPath
    let root: ObjectPath
    let definition: GATTApplication
    var characteristics: [CharacteristicRecord]
    var registered = false
    /// Centrals seen since the application was registered.
    var seen: Set<BluetoothAddress> = []

    func access(_ index: Int, device: BluetoothAddress?) -> AttributeAccess {
        let record = characteristics[index]
        return AttributeAccess(
            application: id, adapter: adapter, service: definition.services[record.service].uuid,
            characteristic: record.definition.uuid, device: device)
    }

    /// The index of the characteristic `uuid` (in the service `service`,
    /// when given); several matches are `.ambiguous`.
    func characteristicIndex(_ uuid: BluetoothUUID, service: BluetoothUUID?) throws(BlueZError) -> Int {
        let matches = characteristics.indices.filter { index in
            characteristics[index].definition.uuid == uuid
                && (service.map { definition.services[characteristics[index].service].uuid == $0 } ?? true)
        }
        guard let first = matches.first else {
            throw BlueZError(.notFound, "application \(id) has no characteristic \(uuid.shortString)")
        }
        guard matches.count == 1 else {
            throw BlueZError(
                .ambiguous, "\(uuid.shortString) is in more than one service of application \(id); name the service",
                candidates: matches.map { index in
                    AttributeCandidate(
                        uuid: uuid, handle: nil, serviceUUID: definition.services[characteristics[index].service].uuid,
                        serviceHandle: nil)
                })
        }
        return first
    }
}

/// One characteristic of a published application.
struct CharacteristicRecord: Sendable {
    let path: ObjectPath
    let service: Int
    let definition: GATTApplication.Characteristic
    var value: [UInt8]
    var notifying = false
}

/// A published advertisement.
struct AdvertisementRecord: Sendable {
    let id: String
    let adapter: String
    var adapterPath: ObjectPath
    let path: ObjectPath
    let definition: Advertisement
    var registered = false
}

/// A delegated request waiting for a client's answer.
struct PendingRequest: Sendable {
    let request: DelegatedRequest
    let promise: Promise<RequestAnswer, BlueZError>
}
