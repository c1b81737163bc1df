import BlueZ
import GatewayCore
import Metrics

/// Counters of pairings and of the keeper's work, made with the gateway so
/// that each reads 0 before its first event:
///
/// - `blegateway_pairing_attempts_total{outcome}`: `succeeded` or `failed`;
/// - `blegateway_keeper_reconnect_attempts_total`,
///   `blegateway_keeper_reconnects_total`, `blegateway_keeper_given_up_total`.
struct OutcomeCounters: CoreEventPublishing {
    private let pairingSucceeded = Counter(label: "blegateway_pairing_attempts_total", dimensions: [("outcome", "succeeded")])
    private let pairingFailed = Counter(label: "blegateway_pairing_attempts_total", dimensions: [("outcome", "failed")])
    private let keeperAttempts = Counter(label: "blegateway_keeper_reconnect_attempts_total")
    private let keeperReconnects = Counter(label: "blegateway_keeper_reconnects_total")
    private let keeperGivenUp = Counter(label: "blegateway_keeper_given_up_total")

    func countPairing(succeeded: Bool) {
        (succeeded ? pairingSucceeded : pairingFailed).increment()
    }

    /// Counts a pairing's outcome, and every step of keeping a device (the
    /// ones the event log leaves out too).
    func publish(_ event: CoreEvent) {
        switch event {
        case .pairing(.succeeded): countPairing(succeeded: true)
        case .pairing(.failed): countPairing(succeeded: false)
        case .pairing: break
        case .keeping(let step, _): count(step)
        }
    }

    func count(_ step: ConnectionKeeper.Event) {
        switch step {
        case .reconnecting: keeperAttempts.increment()
        case .connected: keeperReconnects.increment()
        case .givenUp: keeperGivenUp.increment()
        }
    }
}
