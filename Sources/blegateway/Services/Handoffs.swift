import BlueZ
import DBus
import GatewayAPI
import MQTTBridge
import PersistedState

/// The products the gateway's services hand each other as they start (see
/// `Handoff`), which make the start order: the store, the simulator's bus,
/// the bus connection, the central, the core (restored from the store), the
/// API, the pairing agent and the MQTT bridge, and last the HTTP server.
struct Handoffs: Sendable {
    /// The state store; nil with `--no-state`.
    var store = Handoff<Store?>()
    /// Where bluetoothd (or the simulator) is.
    var bus = Handoff<BusAddress>()
    /// The bus connection, supervised.
    var connection = Handoff<BusSupervisor>()
    /// The bus's policy lets this user call bluetoothd (checked while the
    /// central starts; there is no policy on the simulator's bus).
    var bluezAccess = Handoff<Void>()
    var central = Handoff<Central>()
    /// The API's object over the core, once the core runs, restored from
    /// the store.
    var core = Handoff<Gateway>()
    /// The API, following the core's events for its streams.
    var gateway = Handoff<Gateway>()
    /// The pairing agent asked bluetoothd to register it (pairing by Just
    /// Works goes on when it could not).
    var agent = Handoff<Void>()
    /// The MQTT bridge, its fleet attached to the API; nil without `--mqtt`.
    var bridge = Handoff<Bridge?>()

    /// Throws `error`, why a service could not start, once the store has
    /// opened. Returns instead when the store could not be used (its error,
    /// which names the state directory's fix, is the one the start
    /// reports) or the service was told to stop first.
    func fail(with error: any Error) async throws {
        do { _ = try await store.take() } catch { return }
        throw error
    }
}
