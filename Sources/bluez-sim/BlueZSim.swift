import ArgumentParser
import BlueZSimulator
import DBus
import Glibc
import Logging
import ServiceLifecycle

@main
struct BlueZSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez-sim",
        abstract: "Serve a simulated BlueZ 5.66 (org.bluez) on a D-Bus bus.",
        discussion: """
            bluez-sim takes the name org.bluez on the bus at ADDRESS and serves the adapters, \
            devices and GATT databases of a scenario, as bluetoothd 5.66 would: discovery with \
            filters, advertisements, connections, pairing, reads, writes and notifications, with \
            bluetoothd's error names and messages.

            Point real tools at it through the system-bus variable:

              ADDRESS=$(dbus-daemon --session --print-address --fork)   # a private bus
              bluez-sim --bus "$ADDRESS" &
              DBUS_SYSTEM_BUS_ADDRESS="$ADDRESS" bluetoothctl
              DBUS_SYSTEM_BUS_ADDRESS="$ADDRESS" busctl --system tree org.bluez

            Without --scenario it serves the built-in demo (a heart-rate strap, a thermometer, \
            a smart plug and a beacon); --print-default-scenario prints it as YAML, a start for \
            your own. The format is in docs/scenarios.md. It runs until SIGINT or SIGTERM, or \
            until its bus goes away.

            Control it from outside through org.blegateway.Simulator1 at /org/blegateway/simulator \
            (name org.blegateway.Simulator) on the same bus: SetInRange(sb), DropConnection(s), \
            SetRSSI(sn), RemoveDevice(s), SetValue(ssay), SetPowered(sb), StopBluetoothd(), \
            StartBluetoothd(), RestartBluetoothd(), IsBluetoothdRunning() -> b, ExportedDevices() -> as:

              busctl --address="$ADDRESS" call org.blegateway.Simulator /org/blegateway/simulator \\
                  org.blegateway.Simulator1 SetInRange sb C4:7C:8D:6A:1B:01 false
              busctl --address="$ADDRESS" call org.blegateway.Simulator /org/blegateway/simulator \\
                  org.blegateway.Simulator1 StopBluetoothd

            docs/simulator.md describes each call.
            """)

    @Option(name: .long, help: ArgumentHelp("The D-Bus address of the bus to serve on.", valueName: "address"))
    var bus: String?

    @Option(name: .long, help: ArgumentHelp("A scenario file (YAML or JSON).", valueName: "file"))
    var scenario: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Scale every latency (connect, resolve, pair, expiry) by this factor; overrides the scenario's timing.",
            valueName: "factor"))
    var timing: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "When to emit PropertiesChanged(Connected=true): never (the default: what bluetoothd 5.66 does most often), always, or a probability 0...1; overrides the scenario's connectedSignal.",
            valueName: "when"))
    var connectedSignal: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Whether devices are heard at the start of a discovery: always, never (each one is heard one advertising interval later, as the VM rig's kernel drops btvirt's one report per scan start), or a probability 0...1.",
            valueName: "when"))
    var scanStartReport: String = "always"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds a discovered device stays after discovery last heard it (bluetoothd's TemporaryTimeout, default 30), before --timing scales it.",
            valueName: "seconds"))
    var temporaryTimeout: Double = 30

    @Flag(name: .long, help: "Serve bluetoothd's experimental interfaces too (AdvertisingFlags, AdvertisingData, AdvertisementMonitorManager1), as bluetoothd -E.")
    var experimental = false

    @Flag(name: .long, help: "Print the built-in default scenario as YAML and exit.")
    var printDefaultScenario = false

    func validate() throws {
        if !printDefaultScenario && bus == nil { throw ValidationError("--bus ADDRESS is required") }
        if let timing, !(timing >= 0) { throw ValidationError("--timing must be 0 or more") }
        guard temporaryTimeout > 0 else { throw ValidationError("--temporary-timeout must be more than 0") }
        _ = try parsedConnectedSignal()
        _ = try parsedScanStartReport()
    }

    func run() async throws {
        if printDefaultScenario {
            print(Scenario.defaultYAML, terminator: "")
            return
        }
        var world = Scenario.default
        if let scenario {
            do {
                world = try Scenario.load(path: scenario)
            } catch {
                throw ValidationError(error.description)
            }
        }
        if let timing { world.timing = timing }
        if let signal = try parsedConnectedSignal() { world.connectedSignal = signal }
        let options = SimulatorOptions(
            scanStartReport: try parsedScanStartReport(), experimental: experimental, temporaryTimeout: temporaryTimeout)
        let simulator = try await SimulatedBlueZ.start(address: bus ?? "", scenario: world, options: options)
        let control: Connection
        do {
            control = try await Connection.connect(to: .address(bus ?? ""))
            try await SimulatorControl.export(simulator, on: control)
        } catch {
            await simulator.stop()
            throw error
        }
        print("bluez-sim: serving org.bluez with \(world.adapters.count) adapter(s), \(world.devices.count) device(s)")
        // Whoever started us (a test, a script) waits for that line.
        fflush(nil)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    ServiceGroupConfiguration.ServiceConfiguration(
                        service: SimulatorService(simulator: simulator, control: control),
                        successTerminationBehavior: .gracefullyShutdownGroup)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "bluez-sim")))
        try await group.run()
        if simulator.connection.wasDroppedByBus {
            FileHandleOutput.standardError("bluez-sim: the bus went away (dbus-daemon stopped); exiting\n")
            throw ExitCode(1)
        }
    }

    private func parsedConnectedSignal() throws -> SimulatorOptions.ConnectedSignal? {
        guard let connectedSignal else { return nil }
        guard let signal = SimulatorOptions.ConnectedSignal(connectedSignal) else {
            throw ValidationError("--connected-signal is always, never or a probability between 0 and 1")
        }
        return signal
    }

    private func parsedScanStartReport() throws -> SimulatorOptions.ScanStartReport {
        switch scanStartReport {
        case "always": return .always
        case "never": return .never
        default:
            guard let probability = Double(scanStartReport), (0...1).contains(probability) else {
                throw ValidationError("--scan-start-report is always, never or a probability between 0 and 1")
            }
            return .sometimes(probability)
        }
    }
}

/// Writes to the standard streams without Foundation.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(2, &bytes, bytes.count)
    }
}
