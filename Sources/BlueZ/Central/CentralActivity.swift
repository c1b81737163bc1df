/// How much the central is doing at one moment, for gauges: read from the
/// mirror and the central's own records, with no D-Bus traffic.
public struct CentralActivity: Sendable, Hashable {
    /// Devices bluetoothd reports connected, whoever connected them.
    public var connectedDevices: Int
    /// Of those, the ones this central connected (and will disconnect when it stops).
    public var connectedByCentral: Int
    /// Open discovery sessions (each scan stream or timed scan is one).
    public var scanSessions: Int
    /// Characteristics the central is subscribed to (StartNotify in place),
    /// however many consumers share each.
    public var subscriptions: Int
    /// Consumers of those subscriptions.
    public var subscribers: Int

    public init(connectedDevices: Int, connectedByCentral: Int, scanSessions: Int, subscriptions: Int, subscribers: Int) {
        self.connectedDevices = connectedDevices
        self.connectedByCentral = connectedByCentral
        self.scanSessions = scanSessions
        self.subscriptions = subscriptions
        self.subscribers = subscribers
    }
}

extension Central {
    /// What the central is doing now.
    public var activity: CentralActivity {
        state.withLock { state in
            CentralActivity(
                connectedDevices: state.tree.devices.values.count(where: \.connected),
                connectedByCentral: state.connectedByUs.count,
                scanSessions: state.sessions.count,
                subscriptions: state.subscriptions.values.count(where: \.notifying),
                subscribers: state.subscriptions.values.reduce(0) { $0 + $1.subscribers.count })
        }
    }
}
