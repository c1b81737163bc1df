import DBus

/// What a reducer step changed: the derived events of the object tree.
///
/// Changes name objects by path; the consumer reads the objects' new state
/// from the tree when it needs it, so a step allocates no snapshots.
enum TreeChange: Sendable, Hashable {
    case adapterAdded(ObjectPath)
    /// Properties of an adapter changed (their names).
    case adapterChanged(ObjectPath, [String])
    /// The adapter's last state is carried, as it is no longer in the tree.
    case adapterRemoved(Adapter)
    case deviceAdded(ObjectPath)
    /// Properties of a device changed (their names, as bluetoothd sent them).
    case deviceChanged(ObjectPath, [String])
    case deviceRemoved(Device)
    /// The device became connected (by `Connected`, or implied by
    /// `ServicesResolved` or a successful `Connect()`).
    case deviceConnected(ObjectPath)
    /// The device disconnected; the reason when bluetoothd gave one.
    case deviceDisconnected(ObjectPath, reason: String?)
    case servicesResolved(ObjectPath)
    /// A service, characteristic or descriptor appeared or went away.
    case gattAdded(ObjectPath)
    case gattRemoved(ObjectPath)
    /// A characteristic's `Value` changed: a notification, an indication, or
    /// the result of a read, which bluetoothd also stores in `Value`.
    case characteristicValue(ObjectPath, [UInt8])
}
