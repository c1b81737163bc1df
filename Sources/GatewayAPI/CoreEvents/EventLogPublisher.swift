import BlueZ
import GatewayCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The core's events, written to the gateway's event log (`GET /v1/events`)
/// as the JSON `PairingJSON` and `GatewayEvent` give them, and counted in
/// `GET /metrics` (pairing outcomes, every step of keeping a device).
struct EventLogPublisher: CoreEventPublishing {
    let log: EventLog
    let counters: OutcomeCounters

    func publish(_ event: CoreEvent) {
        // Stamped now; the JSON is built only if a stream takes the event.
        let now = Date()
        switch event {
        case .pairing(let pairing):
            if case .succeeded = pairing { counters.countPairing(succeeded: true) }
            if case .failed = pairing { counters.countPairing(succeeded: false) }
            let type = PairingJSON.type(of: pairing)
            log.publish(type: type, device: PairingJSON.address(of: pairing).description, json: PairingJSON.event(pairing, at: now))
        case .keeping(let step, let announced):
            // Every attempt is counted; only the announced ones are logged.
            counters.count(step)
            if announced { GatewayEvent(step).publish(to: log) }
        }
    }
}
