import DBus
import Glibc
import Synchronization

/// A minimal, fast stand-in for bluetoothd: the objects of one adapter and
/// one connected, resolved device whose GATT service has two
/// characteristics, served with the DBus module's ObjectServer.
///
/// - `fff1` (read): `ReadValue` answers at once with a 20-byte value and,
///   as bluetoothd does after every read, updates `Value` with a
///   PropertiesChanged before the reply (`--no-read-signal` turns that off).
/// - `fff2` (read, notify): `StartNotify`/`StopNotify` set `Notifying`;
///   `AcquireNotify` hands out a socket as bluetoothd 5.66 does (the path
///   the gateway takes by default); the `emit` command sends each value at
///   a requested rate, on the acquired socket while there is one, else as
///   PropertiesChanged(Value), whoever listens. `--no-acquire-notify`
///   refuses AcquireNotify (as bluetoothd does for a characteristic that
///   indicates), so every value is a signal.
///
/// Every value is `[seq: UInt32 LE][CLOCK_MONOTONIC ns: UInt64 LE][8 × 0xA5]`,
/// so a receiver on this machine measures latency from the moment the value
/// was handed to the bus connection, and loss from the sequence.
struct Responder {
    static let adapterPath: ObjectPath = "/org/bluez/hci0"
    static let address = "B0:0B:00:00:00:01"
    static let devicePath: ObjectPath = "/org/bluez/hci0/dev_B0_0B_00_00_00_01"
    static let servicePath: ObjectPath = "/org/bluez/hci0/dev_B0_0B_00_00_00_01/service000c"
    static let readPath: ObjectPath = "/org/bluez/hci0/dev_B0_0B_00_00_00_01/service000c/char000d"
    static let notifyPath: ObjectPath = "/org/bluez/hci0/dev_B0_0B_00_00_00_01/service000c/char000f"
    static let characteristicInterface: InterfaceName = "org.bluez.GattCharacteristic1"

    static func uuid(_ short: String) -> String { "0000\(short)-0000-1000-8000-00805f9b34fb" }

    /// The value for sequence number `seq`, stamped now.
    static func value(seq: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: 20)
        withUnsafeBytes(of: seq.littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
        withUnsafeBytes(of: monotonicNanoseconds().littleEndian) { bytes.replaceSubrange(4..<12, with: $0) }
        return bytes
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    let bus: Connection
    let readSignal: Bool
    let acquireNotify: Bool
    /// fff2's AcquireNotify socket, while a client holds one.
    let notifySocket = NotifySocket()
    /// Counts reads, so every read value is distinct (as a sensor's would be).
    let reads = ReadCounter()

    /// Exports the objects and takes `org.bluez`.
    func start() async throws {
        let vardict = DBusType.dictionary(key: .string, value: .variant)
        let objects = bus.objects
        objects.addObjectManager(at: "/")
        let ok: ExportedInterface.MethodHandler = { _ in [] }
        let adapter = ExportedInterface(
            "org.bluez.Adapter1",
            methods: [
                .init("StartDiscovery", handler: ok), .init("StopDiscovery", handler: ok),
                .init("SetDiscoveryFilter", inputs: [.init("filter", vardict)], handler: ok),
                .init("RemoveDevice", inputs: [.init("device", .objectPath)], handler: ok),
            ],
            properties: [
                .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
                .init("Alias", .string), .init("Class", .uint32), .init("Powered", .boolean),
                .init("Discoverable", .boolean), .init("Pairable", .boolean), .init("Discovering", .boolean),
                .init("UUIDs", .array(.string)), .init("Roles", .array(.string)),
            ])
        try objects.add(
            adapter, at: Self.adapterPath,
            properties: [
                "Address": .string("00:1A:7D:DA:71:13"), "AddressType": .string("public"), "Name": .string("bench"),
                "Alias": .string("bench"), "Class": .uint32(0), "Powered": .boolean(true),
                "Discoverable": .boolean(false), "Pairable": .boolean(true), "Discovering": .boolean(false),
                "UUIDs": .strings([]),
                // What bluetoothd 5.66 reports for an LE controller; Bleak
                // picks its default adapter by the central role.
                "Roles": .strings(["central", "peripheral"]),
            ])
        let device = ExportedInterface(
            "org.bluez.Device1",
            methods: [.init("Connect", handler: ok), .init("Disconnect", handler: ok)],
            properties: [
                .init("Address", .string), .init("AddressType", .string), .init("Name", .string),
                .init("Alias", .string), .init("Paired", .boolean), .init("Bonded", .boolean),
                .init("Trusted", .boolean), .init("Blocked", .boolean), .init("LegacyPairing", .boolean),
                .init("Connected", .boolean), .init("UUIDs", .array(.string)), .init("Adapter", .objectPath),
                .init("ServicesResolved", .boolean),
            ])
        try objects.add(
            device, at: Self.devicePath,
            properties: [
                "Address": .string(Self.address), "AddressType": .string("random"), "Name": .string("bench sensor"),
                "Alias": .string("bench sensor"), "Paired": .boolean(true), "Bonded": .boolean(true),
                "Trusted": .boolean(true), "Blocked": .boolean(false), "LegacyPairing": .boolean(false),
                "Connected": .boolean(true), "UUIDs": .strings([Self.uuid("fff0")]),
                "Adapter": .objectPath(Self.adapterPath), "ServicesResolved": .boolean(true),
            ])
        let service = ExportedInterface(
            "org.bluez.GattService1",
            properties: [
                .init("UUID", .string), .init("Device", .objectPath), .init("Primary", .boolean),
                .init("Includes", .array(.objectPath)),
            ])
        try objects.add(
            service, at: Self.servicePath,
            properties: [
                "UUID": .string(Self.uuid("fff0")), "Device": .objectPath(Self.devicePath), "Primary": .boolean(true),
                "Includes": .objectPaths([]),
            ])
        let characteristic = makeCharacteristicInterface(vardict: vardict)
        try objects.add(
            characteristic, at: Self.readPath,
            properties: [
                "UUID": .string(Self.uuid("fff1")), "Service": .objectPath(Self.servicePath),
                "Value": .bytes(Self.value(seq: 0)), "Flags": .strings(["read"]), "MTU": .uint16(517),
            ])
        try objects.add(
            characteristic, at: Self.notifyPath,
            properties: [
                "UUID": .string(Self.uuid("fff2")), "Service": .objectPath(Self.servicePath),
                "Value": .bytes(Self.value(seq: 0)), "Notifying": .boolean(false),
                "Flags": .strings(["read", "notify"]), "NotifyAcquired": .boolean(false), "MTU": .uint16(517),
            ])
        _ = try await bus.requestName("org.bluez")
    }

    private func makeCharacteristicInterface(vardict: DBusType) -> ExportedInterface {
        let objects = bus.objects
        let readSignal = readSignal
        let reads = reads
        let interface = Self.characteristicInterface
        let acquireNotify = acquireNotify
        let notifySocket = notifySocket
        return ExportedInterface(
            interface,
            methods: [
                .init("ReadValue", inputs: [.init("options", vardict)], outputs: [.init("value", .array(.byte))]) {
                    call in
                    let value = Self.value(seq: reads.next())
                    // bluetoothd stores every read result in Value and
                    // announces it (src/gatt-client.c read_cb): a real read
                    // costs the gateway that signal too.
                    if readSignal { try objects.update(["Value": .bytes(value)], of: interface, at: call.path) }
                    return [.bytes(value)]
                },
                .init(
                    "AcquireNotify", inputs: [.init("options", vardict)],
                    outputs: [.init("fd", .unixFD), .init("mtu", .uint16)]
                ) { [bus] call in
                    guard acquireNotify, call.path == Self.notifyPath else {
                        throw DBusError(ErrorName(unchecked: "org.bluez.Error.NotSupported"), "Operation is not supported")
                    }
                    guard let (ours, theirs) = notifySocket.acquire() else {
                        throw DBusError(ErrorName(unchecked: "org.bluez.Error.NotPermitted"), "Notify acquired")
                    }
                    // bluetoothd releases the acquisition when the client
                    // closes its end (`sock_hup`).
                    do {
                        _ = try bus.watch(UnixFD(dup(ours))) { event, _ in
                            guard event != .readable else { return }
                            notifySocket.release()
                            try? objects.update(["NotifyAcquired": .boolean(false)], of: interface, at: call.path)
                        }
                    } catch {
                        notifySocket.release()
                        _ = Glibc.close(theirs)
                        throw error
                    }
                    try objects.update(["NotifyAcquired": .boolean(true)], of: interface, at: call.path)
                    return [.unixFD(.transferring(theirs)), .uint16(517)]
                },
                .init("StartNotify") { call in
                    try objects.update(["Notifying": .boolean(true)], of: interface, at: call.path)
                    return []
                },
                .init("StopNotify") { call in
                    try objects.update(["Notifying": .boolean(false)], of: interface, at: call.path)
                    return []
                },
            ],
            properties: [
                .init("UUID", .string), .init("Service", .objectPath), .init("Value", .array(.byte)),
                .init("Notifying", .boolean), .init("Flags", .array(.string)), .init("NotifyAcquired", .boolean),
                .init("MTU", .uint16),
            ])
    }

    /// Sends `count` notifications at `rate` per second on `fff2`, on the
    /// calling thread; returns how long it took. Events due together are
    /// sent as a batch (each stamped when it is built), so the rate holds
    /// even when the clock's sleeps are coarse.
    func emit(rate: Double, count: Int) -> (sent: Int, nanoseconds: UInt64) {
        let start = Self.monotonicNanoseconds()
        let period = 1e9 / rate
        var sent = 0
        while sent < count {
            let now = Self.monotonicNanoseconds()
            let due = min(count, Int(Double(now - start) / period) + 1)
            while sent < due {
                let value = Self.value(seq: UInt32(truncatingIfNeeded: sent))
                if notifySocket.send(value) {
                    sent += 1
                    continue
                }
                do {
                    try bus.objects.update(["Value": .bytes(value)], of: Self.characteristicInterface, at: Self.notifyPath)
                } catch {
                    return (sent, Self.monotonicNanoseconds() - start)
                }
                sent += 1
            }
            guard sent < count else { break }
            let next = start + UInt64(Double(sent) * period)
            let current = Self.monotonicNanoseconds()
            if next > current {
                var pause = timespec(tv_sec: Int((next - current) / 1_000_000_000), tv_nsec: Int((next - current) % 1_000_000_000))
                nanosleep(&pause, nil)
            }
        }
        return (sent, Self.monotonicNanoseconds() - start)
    }
}

/// A counter shared by the ReadValue handlers, which run in tasks of their own.
final class ReadCounter: Sendable {
    private let value = Atomic<UInt32>(0)
    func next() -> UInt32 { value.add(1, ordering: .relaxed).newValue }
}
