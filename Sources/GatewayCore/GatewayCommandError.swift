import BlueZ

/// Why a command of the core failed, in terms no door knows: each door
/// turns it into its own answer (GatewayAPI's `Problem(_:)` into a problem
/// response, and the MQTT bridge through that same mapping into problem
/// JSON on the reply topic).
public enum GatewayCommandError: Error, Sendable {
    /// An input the command cannot take: which one (named as the doors name
    /// it, `address`, `timeout_ms`, ...) and why.
    case invalidParameter(name: String, reason: String)
    /// What the command names does not exist (a device that is not kept).
    case notFound(String)
    /// BlueZ refused or failed: its error, with the D-Bus error name, the
    /// ATT code and the candidates of an ambiguous name, passed through.
    case bluez(BlueZError)
    /// No adapter can take the command (none named, none present).
    case noAdapter(String)
    /// The client, or the gateway, holds as many of what the command would
    /// create as it may.
    case limitReached(LimitReached)
    /// The state store could not save the change; nothing was changed.
    case stateStore(StateStoreFailure)
    /// What the command waits on (the fleet's broker) did not answer in time.
    case timeout(String)
    /// What the command needs (the fleet's broker) cannot be reached.
    case unavailable(String)
}
