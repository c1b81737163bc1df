import BlueZ

/// What a keep command did.
public enum KeepOutcome: Sendable {
    /// This gateway keeps the device (`isNew`: it did not before; else its
    /// options changed); the device as the keeper now has it.
    case kept(ConnectionKeeper.KeptDevice?, isNew: Bool)
    /// The fleet's wish was published; the fleet's gateways take it from there.
    case keptByFleet(FleetKeep)
}
