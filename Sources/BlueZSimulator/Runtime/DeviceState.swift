import DBus

/// One simulated peripheral: the radio side (is it in range, what does it
/// advertise, how will its next connection go) and bluetoothd's view of it
/// (is there a Device1 object, connected, paired, which GATT objects).
final class DeviceState {
    var spec: Scenario.Device
    let adapter: String
    let path: ObjectPath

    // The radio side.
    var inRange = true
    var connectFailuresLeft: Int
    var advertisements: UInt64 = 0
    var rssi: Int16
    var characteristics: [CharacteristicModel] = []
    let database: GATTDatabase
    /// The object path of each characteristic (made once: notifications
    /// are the hot path).
    let characteristicPaths: [ObjectPath?]

    // bluetoothd's view.
    var exported = false
    var reportedRSSI: Int16?
    var reportedManufacturerData: [UInt16: [UInt8]] = [:]
    var reportedServiceData: [GATTUUID: [UInt8]] = [:]
    var connected = false
    var connecting = false
    var pairing = false
    /// The agent a pairing exchange is waiting for (bluetoothd sends it
    /// `Cancel` when the pairing is cancelled meanwhile).
    var askedAgent: SimulatorCore.Agent?
    var servicesResolved = false
    var paired: Bool
    var trusted: Bool
    var blocked: Bool
    /// Bumped whenever a connection starts or ends, so that delayed work of
    /// an older connection (service resolution) can tell it is stale.
    var connectionGeneration: UInt64 = 0
    /// Bumped whenever the device is seen, so that only the latest expiry
    /// timer removes it.
    var sightingGeneration: UInt64 = 0
    var advertisingGeneration: UInt64 = 0
    var rangeGeneration: UInt64 = 0
    /// Notification sessions: characteristic index → clients (unique names).
    var notifySessions: [Int: Set<BusName>] = [:]

    init(spec: Scenario.Device, adapter: String, path: ObjectPath) {
        self.spec = spec
        self.adapter = adapter
        self.path = path
        connectFailuresLeft = spec.connection.failures
        rssi = spec.rssi
        paired = spec.paired
        trusted = spec.trusted
        stored = spec.paired || spec.trusted
        blocked = spec.blocked
        database = GATTDatabase([GATTDatabase.genericAttribute] + spec.services, firstHandle: 0x0008)
        characteristics = database.characteristics.map { CharacteristicModel($0.spec) }
        let database = self.database
        characteristicPaths = database.characteristics.map { characteristic in
            let service = database.services[characteristic.service]
            return ObjectPath(rawValue: "\(path.rawValue)/\(service.component)/\(characteristic.component)")
        }
    }

    /// Loaded from storage (the scenario's paired or trusted devices), so
    /// not temporary.
    var stored: Bool
    /// Notification sessions whose CCC write is still in flight.
    var pendingNotify: Set<Int> = []
    /// AcquireNotify and AcquireWrite sockets by characteristic index
    /// (bluetoothd's `notify_io` and `write_io`), and AcquireNotify calls
    /// still writing the CCC (the socket counts as taken meanwhile).
    var acquiredNotify: [Int: AcquiredSocket] = [:]
    var acquiredWrite: [Int: AcquiredSocket] = [:]
    var acquiringNotify: Set<Int> = []
    /// The peripheral holds back its answers to ATT requests (control API).
    var gattHeld = false
    /// ATT requests waiting for the peripheral to answer.
    var heldRequests: [CheckedContinuation<Void, Never>] = []

    /// bluetoothd removes a temporary device TemporaryTimeout after it was
    /// last seen, and when the adapter powers off: one that is neither
    /// connected, bonded nor loaded from storage. Setting Trusted on a
    /// discovered device does not keep it (seen in the VM rig: a trusted,
    /// discovered device went with the power).
    var isTemporary: Bool { !connected && !connecting && !paired && !stored }

    /// The advertisement this device would send now.
    func report(jitter: Int16) -> AdvertisingReport {
        AdvertisingReport(
            address: spec.address, name: spec.name, rssi: max(-127, min(20, rssi + jitter)),
            txPower: spec.txPower, uuids: spec.advertising.uuids, flags: spec.advertising.flags)
    }

    /// The manufacturer data of the current advertisement: with `counter`
    /// set, the last byte of each entry is the advertisement count.
    var manufacturerData: [UInt16: [UInt8]] {
        guard spec.advertising.counter else { return spec.advertising.manufacturerData }
        return spec.advertising.manufacturerData.mapValues { data in
            guard !data.isEmpty else { return data }
            var bytes = data
            bytes[bytes.count - 1] = UInt8(truncatingIfNeeded: advertisements)
            return bytes
        }
    }
}
