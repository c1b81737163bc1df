import BlueZ
import BlueZSimulator
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GatewayAPI
import Glibc
import HTTPServer
import Logging
import MQTT
import MQTTBridge
import PersistedState
import ServiceLifecycle

/// Puts the gateway together: the state store, with `--simulate` a private bus and the
/// simulator on it, the supervised bus connection, the BlueZ central, the
/// API, the HTTP server and, with `--mqtt`, the MQTT bridge (stopped first,
/// so that it says `offline` while the rest still runs). Each is started
/// (so that a failure is a clear startup error) and then handed over as a service to one `ServiceGroup`,
/// which stops them in reverse order on SIGINT or SIGTERM: the API ends its
/// streams with their last events, the server drains and closes, the
/// central ends what it started, the bus connection closes, the simulator
/// and its bus stop, and the store commits and closes.
enum GatewayLauncher {
    static func services(_ settings: Settings, logger: Logger) async throws(StartupError) -> [any Service] {
        // A client that leaves mid-write must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // Nor a file-size limit (ulimit -f) the state store reaches: its
        // write then fails (EFBIG), which the store reports like a full disk.
        signal(SIGXFSZ, SIG_IGN)
        let state = settings.keepsState ? try openStore(settings, logger: logger) : nil
        if state == nil { logger.info("no state store (--no-state): nothing is kept across restarts") }
        let simulation: SimulationService?
        do {
            simulation = try await startSimulation(settings, logger: logger)
        } catch {
            await state?.abandon()
            throw error
        }
        let busAddress = simulation.map { BusAddress.address($0.daemon.address) } ?? settings.bus
        let connection: Connection
        do {
            // Values that reach streams on the D-Bus thread wake
            // libmicrohttpd's thread once per turn of that thread, not once
            // per value: the connection (and any that replaces it) ends
            // each turn by resuming the streams written in it.
            connection = try await Connection.connect(
                to: busAddress, configuration: Connection.Configuration(endOfTurn: { StreamWriter.resumeDeferred() }))
        } catch {
            await simulation?.stop()
            await state?.abandon()
            throw StartupError(
                """
                cannot connect to the \(busAddress) (\(error)). Is D-Bus running? In a container, mount the host's \
                /run/dbus/system_bus_socket; without Bluetooth, try --simulate.
                """)
        }
        if simulation == nil {
            do {
                try await checkBlueZAccess(on: connection)
            } catch {
                connection.close()
                throw error
            }
        }
        var centralOptions = Central.Options()
        centralOptions.notifyPath = settings.notifyPath
        centralOptions.slotLimits = settings.slotLimits
        let central = Central(connection: connection, options: centralOptions)
        do {
            try await central.start()
        } catch {
            connection.close()
            await simulation?.stop()
            await state?.abandon()
            throw StartupError("cannot read BlueZ's objects: \(error)")
        }
        reportBluetooth(central, settings: settings, logger: logger)

        var configuration = GatewayConfiguration(
            version: BLEGateway.version, apiKey: settings.apiKey, corsOrigins: settings.corsOrigins,
            defaultAdapter: settings.adapter, simulated: simulation != nil, replayBufferSize: settings.replayBuffer,
            heartbeatInterval: settings.heartbeatInterval, metricsExposition: MetricsBackend.exposition)
        configuration.maximumStreamBufferBytes = settings.streamBufferMax
        configuration.pairingRequestTimeout = settings.pairingRequestTimeout
        configuration.presenceTimeout = settings.presenceTimeout
        configuration.quotas = settings.quotas
        let gateway = Gateway(central: central, configuration: configuration, store: state?.store, logger: logger)
        gateway.start()
        do {
            let restored = try await gateway.restoreKeptConnections()
            if restored > 0 { logger.info("keeping \(restored) device(s) connected, as before the restart") }
            let subscriptions = try await gateway.restoreSubscriptions()
            if subscriptions > 0 { logger.info("holding \(subscriptions) standing subscription(s), as before the restart") }
            let published = try await gateway.restorePeripheral()
            if published.applications + published.advertisements > 0 {
                logger.info(
                    "publishing \(published.applications) application(s) and \(published.advertisements) advertisement(s), as before the restart")
            }
        } catch {
            gateway.stop()
            await central.stop()
            connection.close()
            await simulation?.stop()
            await state?.abandon()
            throw StartupError("the state store cannot be read: \(error.message)")
        }
        let agent = PairingAgent(
            central: central,
            configuration: .init(capability: settings.agentCapability, isDefault: settings.defaultAgent),
            handler: { [gateway] request in await gateway.answerPairing(request) })
        do {
            try await agent.start()
        } catch {
            // Pairing that needs no question (Just Works) works without it.
            logger.warning("the pairing agent could not be registered with bluetoothd: \(error)")
        }
        let server: Server
        let bridge: Bridge?
        do {
            bridge = try makeBridge(settings, gateway: gateway, logger: logger)
            // The bridge is the fleet behind `/v1/fleet/…` (docs/fleet.md).
            if let bridge, bridge.configuration.fleet { gateway.attachFleet(bridge) }
            server = try startServer(settings, responder: gateway.router(), logger: logger)
        } catch {
            await agent.stop()
            gateway.stop()
            await central.stop()
            connection.close()
            await simulation?.stop()
            await state?.abandon()
            throw error
        }
        let stateMetrics = StateMetrics(central: central, mqtt: bridge?.client, store: state?.store)
        MetricsBackend.readBeforeEachScrape { stateMetrics.update() }
        let supervisor = BusSupervisor(address: busAddress, connection: connection)
        // Started in this order, stopped in the reverse.
        var services: [any Service] = state.map { [$0] } ?? []
        if let simulation { services.append(simulation) }
        services += [
            BusService(supervisor: supervisor, central: central, logger: logger),
            CentralService(central: central),
            AgentService(agent: agent),
            HTTPServerService(server: server),
            APIService(gateway: gateway, logger: logger),
        ]
        // Last, so stopped first: `offline` and the end of its notification
        // subscriptions while Bluetooth and the API still run.
        if let bridge { services.append(MQTTBridgeService(bridge: bridge, logger: logger)) }
        return services
    }

    private static func makeBridge(_ settings: Settings, gateway: Gateway, logger: Logger) throws(StartupError)
        -> Bridge?
    {
        guard let mqtt = settings.mqtt else { return nil }
        if mqtt.bridge.commands, mqtt.client.effectiveCredentials == nil {
            logger.warning(
                "MQTT commands are on and the gateway logs in to the broker without credentials: whoever may publish on \(mqtt.bridge.base)/cmd/ drives your Bluetooth devices unless the broker's access rules say otherwise (docs/mqtt.md, Security)")
        }
        do {
            return try Bridge(gateway: gateway, mqtt: mqtt.client, configuration: mqtt.bridge, logger: logger)
        } catch {
            throw StartupError("cannot use the MQTT broker \(mqtt.client.broker): \(error)")
        }
    }

    /// Opens the state store in `--state-dir` (or a fresh temporary
    /// directory): a store that cannot be used stops the start with the
    /// store's own explanation, which names the file and the fix.
    private static func openStore(_ settings: Settings, logger: Logger) throws(StartupError) -> StateStoreService {
        let directory: String
        let temporary: Bool
        if let chosen = settings.stateDirectory {
            directory = chosen
            temporary = false
        } else {
            let made = FileManager.default.temporaryDirectory.appendingPathComponent("blegateway-state-\(UUID().uuidString)").path
            do {
                try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StartupError("cannot make a temporary state directory \(made) (\(error)); give one with --state-dir")
            }
            directory = made
            temporary = true
        }
        let store: Store
        do {
            store = try Store.open(directory: directory, logger: logger)
        } catch {
            if temporary { try? FileManager.default.removeItem(atPath: directory) }
            throw StartupError("the state store cannot be used: \(error.message)")
        }
        let summary = store.eventLogSummary
        logger.info(
            "state store \(store.path)\(temporary ? " (temporary, removed on exit)" : ""): \(summary.count) stored event(s), next event id \(store.nextEventID)")
        return StateStoreService(store: store, temporaryDirectory: temporary ? directory : nil, logger: logger)
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
            let control = try await Connection.connect(to: .address(daemon.address))
            do {
                try await SimulatorControl.export(simulator, on: control)
            } catch {
                control.close()
                await simulator.stop()
                throw error
            }
            logger.info("simulating BlueZ on a private bus (\(daemon.address)) with \(choice == SimulateArgument.builtIn ? "the built-in scenario" : choice)")
            logger.info(
                "the simulated world answers on that bus: busctl --address=\(daemon.address) call org.blegateway.Simulator /org/blegateway/simulator org.blegateway.Simulator1 METHOD ... (docs/simulator.md)")
            return SimulationService(daemon: daemon, simulator: simulator, control: control)
        } catch {
            daemon.stop()
            throw StartupError("the simulator did not start: \(error)")
        }
    }

    /// Fails when the bus's policy refuses this user's calls to bluetoothd.
    /// The central would otherwise read the refusal as bluetoothd being
    /// away and wait for it forever, while only the host's policy can help
    /// (a container's uid is rarely root or in the `bluetooth` group that
    /// upstream BlueZ's policy admits). `Peer.Ping` is answered by libdbus
    /// itself, so it goes through exactly when calls to `org.bluez` do; a
    /// missing or hung bluetoothd is left to the central to report.
    private static func checkBlueZAccess(on connection: Connection) async throws(StartupError) {
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.Peer", method: "Ping",
                timeout: .seconds(5))
        } catch let error as DBusError where error.isAccessDenied {
            throw StartupError(
                """
                the bus's policy refuses this user (uid \(getuid())) calls to bluetoothd (org.bluez): \(error.message). \
                On the host, install the policy docker/dbus/blegateway.conf as /etc/dbus-1/system.d/blegateway.conf \
                and reload D-Bus (see docker/README.md), or run as a user the host's policy lets call org.bluez.
                """)
        } catch {
            return
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
        logger.notice("blegateway \(BLEGateway.version) listening on \(scheme)://\(SocketAddress(host: settings.listen.host, port: port))")
        if settings.apiKey == nil, !["127.0.0.1", "::1", "localhost"].contains(settings.listen.host) {
            logger.warning("listening beyond this machine without --api-key: anyone who can reach it can use your Bluetooth devices")
        }
        return server
    }
}
