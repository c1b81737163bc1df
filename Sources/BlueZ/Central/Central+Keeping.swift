extension Central {
    /// Whether `stop()` leaves the device connected: a device kept
    /// connected (see `ConnectionKeeper`) stays connected when the gateway
    /// stops, for the next start to keep.
    public func leaveConnectedOnStop(_ address: BluetoothAddress, adapter: String, _ leave: Bool) {
        let key = AdapterDevice(adapter: adapter, address: address)
        state.withLock { state in
            if leave { state.keptConnected.insert(key) } else { state.keptConnected.remove(key) }
        }
    }
}
