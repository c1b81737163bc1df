/// Which of the central's events a consumer of `Central.events(_:)` is
/// given. The central checks it before waking the consumer, so that a
/// task waiting for one device's link (a kept connection, a standing
/// subscription) is not woken by every notification and advertisement of
/// every device: with a hundred such tasks, that would be a hundred
/// wake-ups per notification.
public struct CentralEventFilter: Sendable, Hashable {
    private enum Kind: Hashable {
        case all
        case links
        case link(address: BluetoothAddress, adapter: String?)
    }

    private let kind: Kind

    /// Every event.
    public static let all = CentralEventFilter(kind: .all)

    /// The link events of one device (connected, services resolved,
    /// disconnected, removed), and every change of an adapter's state or of
    /// BlueZ's availability (which can end a link without a device event).
    /// With `adapter` nil, the device's link events through any adapter
    /// (a peer heard by several adapters has an object under each).
    public static func link(of address: BluetoothAddress, adapter: String?) -> CentralEventFilter {
        CentralEventFilter(kind: .link(address: address, adapter: adapter))
    }

    /// The link events of every device, and every change of an adapter's
    /// state or of BlueZ's availability: for a consumer that follows
    /// BlueZ itself (to register again when it comes back) and never the
    /// notifications and advertisements.
    public static let links = CentralEventFilter(kind: .links)

    /// Whether this filter passes characteristic values (so whether the
    /// central must build them for its consumer).
    var passesValues: Bool { kind == .all }

    /// The check `Broadcast` makes before it wakes a consumer; nil when
    /// everything passes.
    var check: (@Sendable (CentralEvent) -> Bool)? {
        if passesValues { return nil }
        return { @Sendable event in self.passes(event) }
    }

    func passes(_ event: CentralEvent) -> Bool {
        switch kind {
        case .all: return true
        case .links: return Self.linkDevice(of: event) != nil || Self.isBlueZState(event)
        case .link(let address, let adapter):
            if let device = Self.linkDevice(of: event) {
                return device.address == address && (adapter == nil || device.adapter == adapter)
            }
            return Self.isBlueZState(event)
        }
    }

    /// Whether `event` is one a link filter may pass: a link event or a
    /// change of an adapter's state or of BlueZ's availability.
    static func concernsLinks(_ event: CentralEvent) -> Bool {
        linkDevice(of: event) != nil || isBlueZState(event)
    }

    /// The device of a link event (connected, services resolved,
    /// disconnected, removed); nil for any other event.
    private static func linkDevice(of event: CentralEvent) -> Device? {
        switch event {
        case .connected(let device), .servicesResolved(let device), .disconnected(let device, _), .deviceLost(let device):
            return device
        case .adapterState, .availability, .adapterUpdated, .deviceDiscovered, .deviceUpdated, .characteristicValue:
            return nil
        }
    }

    /// Whether `event` changes an adapter's state or BlueZ's availability.
    private static func isBlueZState(_ event: CentralEvent) -> Bool {
        switch event {
        case .adapterState, .availability: return true
        default: return false
        }
    }
}
