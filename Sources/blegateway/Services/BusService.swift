import BlueZ
import DBus
import Logging
import ServiceLifecycle

/// The supervised bus connection: when the bus drops it (dbus-daemon
/// stopped or restarted), says so, reconnects with backoff and hands the
/// new connection to the central, which rebuilds its mirror and resumes
/// scans and subscriptions. On shutdown (last, after the central stopped)
/// closes the connection.
struct BusService: Service {
    let supervisor: BusSupervisor
    let central: Central
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { [supervisor, central, logger] in
            await supervisor.run { event in
                switch event {
                case .disconnected(let error):
                    logger.error(
                        "the D-Bus connection is lost (\(error.message)): Bluetooth routes answer 503 and /health 503 until it is back; reconnecting")
                case .reconnectFailed(let attempt, let error, let delay):
                    logger.warning("reconnecting to the bus: attempt \(attempt) failed (\(error.message)); next in \(delay)")
                case .reconnected(let connection, let attempts):
                    try await central.attach(connection)
                    logger.notice("reconnected to the bus after \(attempts) attempt(s); BlueZ is \(central.availability.name)")
                }
            }
        }
        supervisor.connection.close()
    }
}
