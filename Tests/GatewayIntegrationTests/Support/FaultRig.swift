import Foundation
import Glibc
import Synchronization
import TestSupport

/// The gateway as it runs beside a real bluetoothd: the `blegateway`
/// executable and `bluez-sim` as separate processes on a private
/// dbus-daemon that the test can kill and restart at the same address. The
/// world is changed from outside, through the simulator's control interface
/// with `busctl`, as a user would.
final class FaultRig: Sendable {
    let bus: RestartableBus
    let gateway: ChildProcess
    let baseURL: String
    let scenarioPath: String
    /// The gateway's `--state-dir`, removed by `stop`.
    let stateDirectory: String
    private let simulatorProcess: Mutex<ChildProcess?>

    static var simulatorExecutable: String {
        URL(fileURLWithPath: GatewayUnderTest.executable).deletingLastPathComponent().appendingPathComponent("bluez-sim").path
    }

    static func start() async throws -> FaultRig {
        let bus = try await RestartableBus()
        let scenarioPath = bus.directory + "/scenario.yaml"
        try TestScenario.yaml.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let simulator = try await startSimulator(bus: bus, scenario: scenarioPath)
        let stateDirectory = try GatewayUnderTest.makeStateDirectory()
        let gateway = try ChildProcess([
            GatewayUnderTest.executable, "serve", "--bus", bus.address, "--listen", "127.0.0.1:0", "--log-level", "debug",
            "--heartbeat-interval", "0.2", "--state-dir", stateDirectory,
        ])
        guard let (scheme, port) = await GatewayUnderTest.waitForPort(gateway) else {
            gateway.kill()
            simulator.kill()
            try? FileManager.default.removeItem(atPath: stateDirectory)
            throw GatewayTestError("the gateway did not start:\n\(gateway.standardError)")
        }
        return FaultRig(
            bus: bus, gateway: gateway, simulator: simulator, scenarioPath: scenarioPath, stateDirectory: stateDirectory,
            baseURL: "\(scheme)://127.0.0.1:\(port)")
    }

    private init(
        bus: RestartableBus, gateway: ChildProcess, simulator: ChildProcess, scenarioPath: String, stateDirectory: String,
        baseURL: String
    ) {
        self.stateDirectory = stateDirectory
        self.bus = bus
        self.gateway = gateway
        self.simulatorProcess = Mutex(simulator)
        self.scenarioPath = scenarioPath
        self.baseURL = baseURL
    }

    private static func startSimulator(bus: RestartableBus, scenario: String) async throws -> ChildProcess {
        // Discovered devices stay 3000 s (scaled by the scenario's timing:
        // 30 s), so that a scan's finds are still there to connect to.
        let simulator = try ChildProcess([
            simulatorExecutable, "--bus", bus.address, "--scenario", scenario, "--temporary-timeout", "3000",
        ])
        guard await simulator.waitForOutput(containing: "bluez-sim: serving", timeout: .seconds(30)) else {
            simulator.kill()
            throw GatewayTestError("bluez-sim did not start: \(simulator.standardError)")
        }
        return simulator
    }

    var simulator: ChildProcess? { simulatorProcess.withLock { $0 } }

    /// Kills the simulator at once, as bluetoothd crashing.
    func killSimulator() {
        simulatorProcess.withLock { process in
            process?.kill()
            process = nil
        }
    }

    /// Starts a new simulator process on the bus.
    func startSimulator() async throws {
        let simulator = try await Self.startSimulator(bus: bus, scenario: scenarioPath)
        simulatorProcess.withLock { $0 = simulator }
    }

    /// Calls a method of the simulator's control interface with busctl.
    @discardableResult
    func control(_ method: String, _ arguments: String...) async throws -> String {
        let result = try await run(
            [
                "busctl", "--address=\(bus.address)", "call", "org.blegateway.Simulator", "/org/blegateway/simulator",
                "org.blegateway.Simulator1", method,
            ] + arguments)
        guard result.status == 0 else { throw GatewayTestError("busctl \(method) failed: \(result.error)") }
        return result.output
    }

    /// Stops everything the rig started.
    func stop() async -> Int32? {
        gateway.signal(SIGTERM)
        let status = await gateway.wait(timeout: .seconds(20))
        gateway.kill()
        killSimulator()
        bus.kill()
        try? FileManager.default.removeItem(atPath: stateDirectory)
        return status
    }

    /// The gateway's open sockets, pipes and eventfds (HTTP and D-Bus
    /// connections and their loops' wake-ups: what a leak would leave). The
    /// signalfds, timerfds and epoll descriptors that Dispatch opens once,
    /// whenever it first needs them (a signal source when the service group
    /// starts, a timer for a first sleep), are not counted.
    var gatewayDescriptors: Int {
        let directory = "/proc/\(gateway.pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) ?? ""
            return !["signalfd", "timerfd", "eventpoll"].contains { target.contains($0) }
        }.count
    }

    /// What the gateway's descriptors are, for a failure message.
    var gatewayDescriptorList: String {
        let directory = "/proc/\(gateway.pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().map { name in
            "\(name) -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) ?? "?")
        }.joined(separator: ", ")
    }

    // MARK: HTTP

    func request(_ method: String, _ path: String, json: String? = nil) async throws -> HTTPAnswer {
        var arguments = ["curl", "-sS", "-i", "--max-time", "60", "-X", method, "-H", "Expect:"]
        if let json { arguments += ["-H", "Content-Type: application/json", "--data-binary", json] }
        let curl = try ChildProcess(arguments + [baseURL + path])
        guard await curl.wait(timeout: .seconds(70)) == 0 else {
            throw GatewayTestError("curl \(method) \(path) failed: \(curl.standardError)\n\(gateway.standardError.suffix(1500))")
        }
        return try HTTPAnswer(raw: curl.standardOutputBytes)
    }

    func get(_ path: String) async throws -> HTTPAnswer { try await request("GET", path) }

    /// Asks `path` until `condition` holds for the answer (or the deadline
    /// passes); returns the last answer.
    func waitFor(
        _ path: String, timeout: Duration = .seconds(30), _ condition: (HTTPAnswer) -> Bool
    ) async throws -> HTTPAnswer {
        let deadline = ContinuousClock.now + timeout
        var answer = try await get(path)
        while !condition(answer), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            answer = try await get(path)
        }
        return answer
    }

    func stream(_ path: String) throws -> EventStreamClient {
        EventStreamClient(try ChildProcess(["curl", "-sN", baseURL + path]))
    }

    /// Scans until BlueZ knows `address`.
    func discover(_ address: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let known = try await get("/v1/devices").array.compactMap { $0["address"] as? String }
            if known.contains(address) { return }
            _ = try await request("POST", "/v1/scan", json: #"{"duration_ms":300}"#)
        }
        throw GatewayTestError("the scan did not find \(address)")
    }
}
