/// An event of the core, for the gateway's event log.
public enum CoreEvent: Sendable {
    case pairing(PairingEvent)
}
