import BlueZ
import ServiceLifecycle

/// The BlueZ central, started before the group runs; on shutdown (after the
/// API and the server) ends the scans, subscriptions and connections it
/// started.
struct CentralService: Service {
    let central: Central

    func run() async throws {
        try? await gracefulShutdown()
        await central.stop()
    }
}
