import BlueZ
import DBus
import Logging
import ServiceLifecycle

/// The BlueZ central on the bus connection, started (BlueZ's objects read)
/// and handed over to the API; on shutdown (after the API and the server)
/// ends the scans, subscriptions and connections it started.
struct CentralService: GatewayService {
    let options: Central.Options
    /// The adapter requests use when they name none (`--adapter`), which
    /// the start checks for.
    let defaultAdapter: String?
    let bus: BusAddress
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        guard let supervisor = try? await handoffs.connection.take() else { return }
        let central = Central(connection: supervisor.connection, options: options)
        do {
            try await central.start()
        } catch {
            // Read while the store opens (see `Handoffs.fail`).
            return try await handoffs.fail(with: StartupError("cannot read BlueZ's objects: \(error)"))
        }
        // A policy that refuses this user stops the start: what the
        // central read then says nothing of bluetoothd.
        do { try await handoffs.bluezAccess.take() } catch { return }
        report(central)
        handoffs.central.hand(central)
        try? await gracefulShutdown()
        await central.stop()
    }

    /// Says at start what the gateway will find: no bluetoothd, no adapter,
    /// or the adapters and their states.
    private func report(_ central: Central) {
        guard central.isBluetoothdRunning else {
            logger.error(
                """
                bluetoothd is not running (org.bluez has no owner on the \(bus)): requests answer 503 \
                until it starts. Without Bluetooth, try --simulate.
                """)
            return
        }
        let adapters = central.adapters()
        if adapters.isEmpty {
            logger.error("bluetoothd has no adapter: requests answer 503 until one appears")
        } else {
            logger.info("adapters: \(adapters.map { "\($0.id) (\($0.state.rawValue))" }.joined(separator: ", "))")
        }
        if let adapter = defaultAdapter, !adapters.contains(where: { $0.id == adapter }) {
            logger.error("--adapter \(adapter) does not exist (yet): requests that use it answer 404")
        }
    }
}
