import BlueZ
import GatewayCore
import Synchronization

/// The core's events, in the order published.
final class RecordedEvents: CoreEventPublishing {
    private let events = Mutex<[CoreEvent]>([])

    func publish(_ event: CoreEvent) {
        events.withLock { $0.append(event) }
    }

    /// The pairing events.
    var pairing: [PairingEvent] {
        events.withLock { events in
            events.compactMap { event in
                guard case .pairing(let pairing) = event else { return nil }
                return pairing
            }
        }
    }

    /// The keeper's steps, and whether each was announced.
    var keeping: [(step: ConnectionKeeper.Event, announced: Bool)] {
        events.withLock { events in
            events.compactMap { event in
                guard case .keeping(let step, let announced) = event else { return nil }
                return (step, announced)
            }
        }
    }
}
