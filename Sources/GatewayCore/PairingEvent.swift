import BlueZ

/// What happens in pairing, as the core publishes it (GatewayAPI writes
/// each as an event of `GET /v1/events`).
public enum PairingEvent: Sendable {
    /// The agent asks a question, or shows a passkey or PIN (a
    /// display-only one, which needs no answer).
    case requested(PendingPairingRequest)
    /// A client answered the question: yes (or a passkey, a PIN), or no.
    case answered(PendingPairingRequest, accepted: Bool)
    /// Nobody answered within the deadline: the agent said no.
    case expired(PendingPairingRequest)
    /// bluetoothd withdrew the question (`Cancel`).
    case cancelled(PendingPairingRequest)
    /// The device is paired: by the gateway, or by bluetoothd on its own.
    case succeeded(Device)
    /// The gateway's pairing of the device failed, and why.
    case failed(adapter: String, address: BluetoothAddress, error: GatewayCommandError)
    /// The device's bond was forgotten (the device removed).
    case unpaired(adapter: String, address: BluetoothAddress)
}

extension PairingEvent {
    /// The event types of pairing, as the event log names them.
    public static let types: Set<String> = [
        "pairing-request", "pairing-request-answered", "pairing-request-expired", "pairing-request-cancelled",
        "pairing-succeeded", "pairing-failed", "device-unpaired",
    ]

    /// The event type of this event (one of `types`).
    public var type: String {
        switch self {
        case .requested: "pairing-request"
        case .answered: "pairing-request-answered"
        case .expired: "pairing-request-expired"
        case .cancelled: "pairing-request-cancelled"
        case .succeeded: "pairing-succeeded"
        case .failed: "pairing-failed"
        case .unpaired: "device-unpaired"
        }
    }

    /// The device the event is about.
    public var device: BluetoothAddress {
        switch self {
        case .requested(let question), .answered(let question, _), .expired(let question), .cancelled(let question):
            question.request.device
        case .succeeded(let device): device.address
        case .failed(_, let address, _), .unpaired(_, let address): address
        }
    }
}
