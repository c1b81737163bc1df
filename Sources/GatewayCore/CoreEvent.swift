import BlueZ

/// An event of the core, for its event log and its observer.
public enum CoreEvent: Sendable {
    case pairing(PairingEvent)
    /// A step of keeping a device connected: every attempt, so that each
    /// can be counted; `announced` is false for most attempts of a device
    /// that stays away (ever more rarely announced, so that it cannot flood
    /// the log: `ConnectionKeeper.announces`).
    case keeping(ConnectionKeeper.Event, announced: Bool)
}
