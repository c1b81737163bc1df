import BlueZ
import GatewayAPI
import Glibc
import Logging
import ServiceLifecycle

/// Puts the gateway together as one `ServiceGroup`: the state store, with
/// `--simulate` a private bus and the simulator on it, the supervised bus
/// connection, the BlueZ central, the pairing agent, the HTTP server, the
/// core, the API and, with `--mqtt`, the MQTT bridge. Each service starts its
/// component in its `run()`, once the products it needs are handed over
/// (see `Handoffs`), so that the start follows what each needs; a start
/// that fails throws a `StartupError`, and the group then stops what did
/// start. On SIGINT or SIGTERM the group stops them in the reverse of
/// the order below: the MQTT bridge says `offline` while the rest still
/// runs, the API ends its streams with their last events, the core stops
/// keeping (kept devices stay connected for the next start) and
/// unregisters its publications, the server drains and closes, the agent unregisters, the central ends what it
/// started, the bus connection closes, the simulator and its bus stop,
/// and the store commits and closes.
enum GatewayLauncher {
    static func serviceGroup(_ settings: Settings, logger: Logger) -> ServiceGroup {
        // A client that leaves mid-write must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // Nor a file-size limit (ulimit -f) the state store reaches: its
        // write then fails (EFBIG), which the store reports like a full disk.
        signal(SIGXFSZ, SIG_IGN)
        var handoffs = Handoffs()
        // What no service of this run makes is there from the start.
        if !settings.keepsState {
            handoffs.store = .ready(nil)
            logger.info("no state store (--no-state): nothing is kept across restarts")
        }
        if settings.simulate == nil { handoffs.bus = .ready(settings.bus) }
        if settings.mqtt == nil { handoffs.bridge = .ready(nil) }

        var api = settings.api
        api.metricsExposition = MetricsBackend.exposition

        var services: [any GatewayService] = []
        if settings.keepsState {
            services.append(StateStoreService(
                directory: settings.stateDirectory, durability: settings.stateDurability, handoffs: handoffs, logger: logger))
        }
        if let simulate = settings.simulate {
            services.append(SimulationService(choice: simulate, handoffs: handoffs, logger: logger))
        }
        services += [
            BusService(simulated: settings.simulate != nil, handoffs: handoffs, logger: logger),
            CentralService(
                options: settings.central, defaultAdapter: settings.api.defaultAdapter, bus: settings.bus, handoffs: handoffs,
                logger: logger),
            AgentService(configuration: settings.agent, handoffs: handoffs, logger: logger),
            HTTPServerService(
                configuration: settings.server, tlsCertificate: settings.tlsCertificate, tlsKey: settings.tlsKey,
                apiKeySet: settings.api.apiKey != nil, handoffs: handoffs, logger: logger),
            CoreService(configuration: api, handoffs: handoffs, logger: logger),
            APIService(handoffs: handoffs, logger: logger),
        ]
        // Last, so stopped first: `offline` and the end of its notification
        // subscriptions while Bluetooth and the API still run.
        if let mqtt = settings.mqtt { services.append(MQTTBridgeService(mqtt: mqtt, handoffs: handoffs, logger: logger)) }
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map {
                    // A start that fails stops, in order, what did start.
                    // The name is given: without it the group makes one with
                    // "\(service)", a cast of each service to the printing
                    // protocols, several full scans of the binary's protocol
                    // conformances at every start (BENCHMARKS.md, 20261129).
                    ServiceGroupConfiguration.ServiceConfiguration(
                        service: $0, failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: $0.description)
                },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }
}
