import HTTPServer
import ServiceLifecycle

/// The HTTP server, listening before the group runs; on shutdown (after the
/// API ended its streams) refuses new requests, lets what is queued drain
/// for up to `gracePeriod`, and closes.
struct HTTPServerService: Service {
    let server: Server
    var gracePeriod: Duration = .seconds(5)

    func run() async throws {
        try? await gracefulShutdown()
        await server.stop(gracePeriod: gracePeriod)
    }
}
