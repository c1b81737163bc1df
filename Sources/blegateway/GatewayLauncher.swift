import BlueZ
import BlueZSimulator
import DBus
import GatewayAPI
import Glibc
import HTTPServer
import Logging
import ServiceLifecycle

/// Puts the gateway together: with `--simulate` a private bus and the
/// simulator on it, the supervised bus connection, the BlueZ central, the
/// API and the HTTP server. Each is started (so that a failure is a clear
/// startup error) and then handed over as a service to one `ServiceGroup`,
/// which stops them in reverse order on SIGINT or SIGTERM: the API ends its
/// streams with their last events, the server drains and closes, the
/// central ends what it started, the bus connection closes, the simulator
/// and its bus stop.
enum GatewayLauncher {
    static func services(_ settings: Settings, logger: Logger) async throws(StartupError) -> [any Service] {
        // A client that leaves mid-write must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        let simulation = try await startSimulation(settings, logger: logger)
        let busAddress = simulation.map { BusAddress.address($0.daemon.address) } ?? settings.bus
        let connection: Connection
        do {
            connection = try await Connection.connect(to: busAddress)
        } catch {
            await simulation?.stop()
            throw StartupError(
                """
                cannot connect to the \(busAddress) (\(error)). Is D-Bus running? In a container, mount the host's \
                /run/dbus/system_bus_socket; without Bluetooth, try --simulate.
                """)
        }
        let central = Central(connection: connection)
        do {
            try await central.start()
        } catch {
            connection.close()
            await simulation?.stop()
            throw StartupError("cannot read BlueZ's objects: \(error)")
        }
        reportBluetooth(central, settings: settings, logger: logger)

        var configuration = GatewayConfiguration(
            version: BLEGateway.version, apiKey: settings.apiKey, corsOrigins: settings.corsOrigins,
            defaultAdapter: settings.adapter, simulated: simulation != nil, replayBufferSize: settings.replayBuffer,
            heartbeatInterval: settings.heartbeatInterval)
        configuration.presenceTimeout = settings.presenceTimeout
        let gateway = Gateway(central: central, configuration: configuration, logger: logger)
        gateway.start()
        let server: Server
        do {
            server = try startServer(settings, responder: gateway.router(), logger: logger)
        } catch {
            gateway.stop()
            await central.stop()
            connection.close()
            await simulation?.stop()
            throw error
        }
        let supervisor = BusSupervisor(address: busAddress, connection: connection)
        // Started in this order, stopped in the reverse.
        var services: [any Service] = []
        if let simulation { services.append(simulation) }
        services += [
            BusService(supervisor: supervisor, central: central, logger: logger),
            CentralService(central: central),
            HTTPServerService(server: server),
            APIService(gateway: gateway, logger: logger),
        ]
        return services
    }

    private static func startSimulation(_ settings: Settings, logger: Logger) async throws(StartupError) -> SimulationService? {
        guard let choice = settings.simulate else { return nil }
        let scenario: Scenario
        if choice == SimulateArgument.builtIn {
            scenario = .default
        } else {
            do {
                scenario = try Scenario.load(path: choice)
            } catch {
                throw StartupError("the scenario \(choice) cannot be used: \(error)")
            }
        }
        let daemon: BusDaemon
        do {
            daemon = try BusDaemon()
        } catch {
            throw StartupError("--simulate needs dbus-daemon (Debian package dbus-daemon): \(error.message)")
        }
        do {
            let connection = try await Connection.connect(to: .address(daemon.address))
            let simulator = try await SimulatedBlueZ.start(on: connection, scenario: scenario)
            logger.info("simulating BlueZ on a private bus (\(daemon.address)) with \(choice == SimulateArgument.builtIn ? "the built-in scenario" : choice)")
            return SimulationService(daemon: daemon, simulator: simulator)
        } catch {
            daemon.stop()
            throw StartupError("the simulator did not start: \(error)")
        }
    }

    private static func reportBluetooth(_ central: Central, settings: Settings, logger: Logger) {
        guard central.isBluetoothdRunning else {
            logger.error(
                """
                bluetoothd is not running (org.bluez has no owner on the \(settings.bus)): requests answer 503 \
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
        if let adapter = settings.adapter, !adapters.contains(where: { $0.id == adapter }) {
            logger.error("--adapter \(adapter) does not exist (yet): requests that use it answer 404")
        }
    }

    private static func startServer(_ settings: Settings, responder: Router, logger: Logger) throws(StartupError) -> Server {
        var configuration = ServerConfiguration(
            host: settings.listen.host, port: settings.listen.port, connectionLimit: settings.maxConnections,
            maxConnectionsPerClient: settings.maxConnectionsPerClient, requestHeaderTimeout: settings.requestHeaderTimeout)
        // The server's own refusals (413, 431, 503 while stopping) are
        // problems too.
        configuration.errorResponses = .problems
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            do {
                configuration.tls = try TLSConfiguration(certificateFile: certificate, privateKeyFile: key)
            } catch {
                throw StartupError("cannot use the TLS certificate and key: \(error)")
            }
        }
        let server = Server(configuration: configuration, responder: responder, logger: logger)
        do {
            try server.start()
        } catch {
            throw StartupError("\(error.message). Is another gateway running? Choose another address with --listen.")
        }
        let scheme = settings.tlsCertificate == nil ? "http" : "https"
        let port = server.port ?? settings.listen.port
        logger.notice("blegateway \(BLEGateway.version) listening on \(scheme)://\(ListenAddress(host: settings.listen.host, port: port))")
        if settings.apiKey == nil, !["127.0.0.1", "::1", "localhost"].contains(settings.listen.host) {
            logger.warning("listening beyond this machine without --api-key: anyone who can reach it can use your Bluetooth devices")
        }
        return server
    }
}
