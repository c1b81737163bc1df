import DBus

/// The GATT applications and advertisements clients registered with the
/// simulated bluetoothd (`GattManager1`, `LEAdvertisingManager1`), and what
/// the simulated remote central received from them.
struct PeripheralRegistry {
    struct Key: Hashable {
        let owner: BusName
        let path: ObjectPath
    }

    /// A characteristic of a registered application, as bluetoothd read it
    /// with GetManagedObjects.
    struct Characteristic {
        let path: ObjectPath
        let uuid: GATTUUID
        let service: GATTUUID
        let flags: [String]
        var indicates: Bool { flags.contains { $0.hasSuffix("indicate") } && !flags.contains { $0.hasSuffix("notify") } }
    }

    struct Application {
        let adapter: ObjectPath
        let characteristics: [Characteristic]
    }

    struct Advertisement {
        let adapter: ObjectPath
        let properties: [String: Value]
    }

    var applications: [Key: Application] = [:]
    var advertisements: [Key: Advertisement] = [:]
    /// The values the simulated central received by notification or
    /// indication, by characteristic object (owner and path).
    var received: [Key: [[UInt8]]] = [:]
    /// The simulated central's subscriptions, by characteristic object.
    var subscriptions: [Key: SignalSubscription] = [:]
    /// The device objects of the simulated central, by adapter id, and
    /// whether its link to that adapter is up.
    var centralLinks: [String: (path: ObjectPath, connected: Bool)] = [:]

    /// The characteristic flags bluetoothd 5.66 accepts (`parse_chrc_flags`
    /// in src/gatt-database.c).
    static let characteristicFlags: Set<String> = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-authenticated-read", "encrypt-authenticated-write", "secure-read",
        "secure-write", "authorize", "encrypt-notify", "encrypt-authenticated-notify", "secure-notify",
        "encrypt-indicate", "encrypt-authenticated-indicate", "secure-indicate",
    ]

    /// The advertising instances a controller offers (what bluetoothd
    /// reports as `SupportedInstances` for the VM rig's virtual controllers).
    static let supportedInstances = 5

    /// The address of the simulated remote central, as bluetoothd names it
    /// in the `device` option of the requests it forwards.
    static let centralAddress = "11:22:33:44:55:66"

    /// Forgets what was registered on an adapter that went away; returns
    /// the advertisements to release and the central's device object.
    mutating func adapterRemoved(_ adapter: ObjectPath, id: String) -> (advertisements: [Key], central: ObjectPath?) {
        let advertisements = self.advertisements.filter { $0.value.adapter == adapter }.map(\.key)
        for key in advertisements { self.advertisements[key] = nil }
        for (key, application) in applications where application.adapter == adapter {
            applications[key] = nil
            for (subscribed, subscription) in subscriptions where subscribed.owner == key.owner
                && subscribed.path.isDescendant(ofOrEqualTo: key.path)
            {
                subscription.cancel()
                subscriptions[subscribed] = nil
            }
        }
        return (advertisements, centralLinks.removeValue(forKey: id)?.path)
    }

    mutating func removeAll() {
        for subscription in subscriptions.values { subscription.cancel() }
        self = PeripheralRegistry()
    }
}
