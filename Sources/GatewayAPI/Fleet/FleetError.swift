/// Why a fleet command has no answer.
public enum FleetError: Error, Sendable, Hashable {
    /// No gateway answered in time.
    case timeout
    /// The command could not be sent (the broker is unreachable, …).
    case unavailable(String)
}
