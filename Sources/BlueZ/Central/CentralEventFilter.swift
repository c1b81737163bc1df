/// Which of the central's events a consumer of `Central.events(_:)` is
/// given. The central checks it before waking the consumer, so that a
/// task waiting for one device's link (a kept connection, a standing
/// subscription) is not woken by every notification and advertisement of
/// every device: with a hundred such tasks, that would be a hundred
/// wake-ups per notification.
public struct CentralEventFilter: Sendable, Hashable {
    private enum Kind: Hashable {
        case all
        case link(address: BluetoothAddress, adapter: String)
    }

    private let kind: Kind

    /// Every event.
    public static let all = CentralEventFilter(kind: .all)

    /// The link events of one device (connected, services resolved,
    /// disconnected, removed), and every change of an adapter's state or of
    /// BlueZ's availability (which can end a link without a device event).
    public static func link(of address: BluetoothAddress, adapter: String) -> CentralEventFilter {
        CentralEventFilter(kind: .link(address: address, adapter: adapter))
    }

    /// Whether this filter passes characteristic values (so whether the
    /// central must build them for its consumer).
    var passesValues: Bool { kind == .all }

    func passes(_ event: CentralEvent) -> Bool {
        switch kind {
        case .all: return true
        case .link(let address, let adapter):
            switch event {
            case .connected(let device), .servicesResolved(let device), .disconnected(let device, _), .deviceLost(let device):
                return device.address == address && device.adapter == adapter
            case .adapterState, .availability:
                return true
            case .adapterUpdated, .deviceDiscovered, .deviceUpdated, .characteristicValue:
                return false
            }
        }
    }
}
