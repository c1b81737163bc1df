import BlueZ

// Kept connections on this gateway: which adapter a kept device is on, and
// how it is doing. (Keeping and releasing, which also touch the state store,
// the quotas and the fleet, are GatewayAPI's `Gateway.keep` and
// `Gateway.unkeep` until those move here.)
extension GatewayCore {
    public func keepStatus(_ command: KeepStatusCommand) throws(GatewayCommandError) -> ConnectionKeeper.KeptDevice {
        let address = command.device.address
        let adapter = try keptAdapter(address, adapter(of: command.device))
        guard let kept = keeper.keptDevice(address, adapter: adapter) else {
            throw .notFound("\(address) on \(adapter) is not kept connected")
        }
        return kept
    }

    /// The adapter of a kept device named without one: the one it is kept
    /// on (so that keeping can be seen, changed and ended while bluetoothd
    /// is away), else the adapter that hears it best with a free connection
    /// slot (`Central.preferredAdapter`), else as `keepAdapter`.
    public func keptAdapter(_ address: BluetoothAddress, _ requested: String?) throws(GatewayCommandError) -> String {
        if let requested { return requested }
        if let kept = keeper.keptDevices().first(where: { $0.address == address }) { return kept.adapter }
        if let preferred = central.preferredAdapter(for: address) { return preferred }
        return try keepAdapter(nil)
    }

    /// The adapter a kept connection is stored under: the one asked for,
    /// else BlueZ's first.
    public func keepAdapter(_ requested: String?) throws(GatewayCommandError) -> String {
        if let requested { return requested }
        guard let first = central.adapters().first?.id else {
            throw .noAdapter(
                "no adapter to keep the device on: name one with ?adapter= or start bluetoothd with an adapter")
        }
        return first
    }
}
