import BlueZ
import DBus
import GatewayAPI
import HTTPServer
import Glibc
import Logging
import ServiceLifecycle

/// The supervised bus connection, made as soon as the bus is known (the
/// simulator's, with `--simulate`), while the store opens: when the bus drops it
/// (dbus-daemon stopped or restarted), says so, reconnects with backoff and
/// hands the new connection to the central, which rebuilds its mirror and
/// resumes scans and subscriptions. On shutdown (after the central
/// stopped) closes the connection.
struct BusService: GatewayService {
    /// Whether the bus is the simulator's, where bluetoothd's policy does
    /// not apply.
    let simulated: Bool
    let handoffs: Handoffs
    let logger: Logger

    func run() async throws {
        let address: BusAddress
        do {
            address = try await handoffs.bus.take()
        } catch {
            return
        }
        // Connected while the store opens (reading BlueZ's objects changes
        // nothing in bluetoothd), so that the start takes the longer of the
        // two rather than their sum.
        let supervisor: BusSupervisor
        do {
            supervisor = try await connect(to: address)
        } catch {
            return try await handoffs.fail(with: error)
        }
        defer { supervisor.connection.close() }
        handoffs.connection.hand(supervisor)
        // Checked while the central adds its rules and reads BlueZ's
        // objects, which it reports only once this is handed over.
        if !simulated {
            do {
                try await checkBlueZAccess(on: supervisor.connection)
            } catch {
                return try await handoffs.fail(with: error)
            }
        }
        handoffs.bluezAccess.hand(())
        guard let central = try? await handoffs.central.take() else { return }
        await cancelWhenGracefulShutdown { [supervisor, logger] in
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
    }

    /// The connection, under a supervisor that replaces it when the bus
    /// drops it (this frame keeps no reference to it, so that a replaced
    /// connection is released).
    private func connect(to address: BusAddress) async throws(StartupError) -> BusSupervisor {
        do {
            // Values that reach streams on the D-Bus thread wake
            // libmicrohttpd's thread once per turn of that thread, not once
            // per value: the connection (and any that replaces it) ends
            // each turn by resuming the streams written in it.
            let connection = try await Connection.connect(
                to: address, configuration: Connection.Configuration(endOfTurn: { StreamWriter.resumeDeferred() }))
            return BusSupervisor(address: address, connection: connection)
        } catch {
            throw StartupError(
                """
                cannot connect to the \(address) (\(error)). Is D-Bus running? In a container, mount the host's \
                /run/dbus/system_bus_socket; without Bluetooth, try --simulate.
                """)
        }
    }

    /// Fails when the bus's policy refuses this user's calls to bluetoothd.
    /// The central would otherwise read the refusal as bluetoothd being
    /// away and wait for it forever, while only the host's policy can help
    /// (a container's uid is rarely root or in the `bluetooth` group that
    /// upstream BlueZ's policy admits). `Peer.Ping` is answered by libdbus
    /// itself, so it goes through exactly when calls to `org.bluez` do; a
    /// missing or hung bluetoothd is left to the central to report.
    private func checkBlueZAccess(on connection: Connection) async throws(StartupError) {
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
}
