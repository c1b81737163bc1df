import BlueZ
import GatewayAPI
import GatewayCore
import Logging
import PersistedState
import ServiceLifecycle

/// The gateway's core (`GatewayCoreService`), made once the central and
/// the store are there, with the API's object over it: the core follows
/// the central, takes up again what the store kept, and only then hands
/// the gateway over to the API. On shutdown (after the API has ended its
/// streams) it stops keeping, kept devices staying connected for the next
/// start, and unregisters its publications from bluetoothd.
struct CoreService: GatewayService {
    let configuration: GatewayConfiguration
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        // Nil: told to shut down before the store (nil itself with
        // `--no-state`, hence the pair) or the central came.
        guard let (store, central) = try? await (handoffs.store.take(), handoffs.central.take()) else { return }
        let gateway = Gateway(central: central, configuration: configuration, store: store, logger: logger)
        let service = GatewayCoreService(core: gateway.core, logger: logger) { [handoffs] in handoffs.core.hand(gateway) }
        do {
            try await service.run()
        } catch let failure as StateStoreFailure {
            throw StartupError("the state store cannot be read: \(failure.message)")
        }
    }
}
