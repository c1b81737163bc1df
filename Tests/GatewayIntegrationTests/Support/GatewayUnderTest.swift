import BlueZSimulator
import DBus
import Foundation
import Glibc
import TestSupport

/// The real `blegateway` process on a private bus, with the simulator
/// served in this process on that bus (so tests can change the world
/// through its control API), driven over HTTP with curl.
final class GatewayUnderTest: Sendable {
    let bus: TestBus
    let simulator: SimulatedBlueZ
    let process: ChildProcess
    let baseURL: String
    /// The gateway's `--state-dir`.
    let stateDirectory: String
    /// Whether `stop` removes it (made by `start`, not the test's).
    let ownsStateDirectory: Bool

    /// The built `blegateway` beside this test binary.
    static var executable: String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("blegateway").path
    }

    /// A new empty directory for a gateway's `--state-dir`.
    static func makeStateDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blegateway-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts the simulator with `scenario` and the gateway with `arguments`
    /// and its state in `stateDirectory` (a new empty one if nil);
    /// `beforeGateway` changes the simulated world before the gateway starts.
    static func start(
        scenario: String = TestScenario.yaml, arguments: [String] = [], environment: [String: String] = [:],
        stateDirectory: String? = nil,
        experimental: Bool = false,
        beforeGateway: (SimulatedBlueZ) async throws -> Void = { _ in }
    ) async throws -> GatewayUnderTest {
        let ownsStateDirectory = stateDirectory == nil
        let stateDirectory = try stateDirectory ?? makeStateDirectory()
        let bus = try TestBus()
        let connection = try await bus.connect()
        // Discovered devices stay 30 s after a scan (bluetoothd's
        // TemporaryTimeout), not 30 s scaled by the scenario's fast timing.
        let simulator = try await SimulatedBlueZ.start(
            on: connection, scenario: try Scenario.parse(scenario),
            options: SimulatorOptions(experimental: experimental, temporaryTimeout: 3000))
        try await beforeGateway(simulator)
        let process = try ChildProcess(
            [
                executable, "serve", "--bus", bus.address, "--listen", "127.0.0.1:0", "--log-level", "debug",
                // Quiet streams notice a departed client at their next
                // heartbeat: keep that short so tests can watch it.
                "--heartbeat-interval", "0.2", "--state-dir", stateDirectory,
            ] + arguments, environment: environment)
        guard let (scheme, port) = await waitForPort(process) else {
            process.kill()
            throw GatewayTestError("the gateway did not start:\n\(process.standardError)")
        }
        return GatewayUnderTest(
            bus: bus, simulator: simulator, process: process, baseURL: "\(scheme)://127.0.0.1:\(port)",
            stateDirectory: stateDirectory, ownsStateDirectory: ownsStateDirectory)
    }

    private init(
        bus: TestBus, simulator: SimulatedBlueZ, process: ChildProcess, baseURL: String, stateDirectory: String,
        ownsStateDirectory: Bool
    ) {
        self.bus = bus
        self.simulator = simulator
        self.process = process
        self.baseURL = baseURL
        self.stateDirectory = stateDirectory
        self.ownsStateDirectory = ownsStateDirectory
    }

    /// The scheme and port from the gateway's "listening on
    /// http(s)://127.0.0.1:PORT" line.
    static func waitForPort(_ process: ChildProcess) async -> (String, Int)? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let log = process.standardError
            for scheme in ["http", "https"] {
                // Only a whole line: the log may be read mid-write, and a
                // prefix of the port's digits is another port.
                if let range = log.range(of: "listening on \(scheme)://127.0.0.1:") {
                    let rest = log[range.upperBound...]
                    let digits = rest.prefix { $0.isNumber }
                    if rest.dropFirst(digits.count).first == "\n", let port = Int(digits) { return (scheme, port) }
                }
            }
            if await process.wait(timeout: .milliseconds(20)) != nil { return nil }
        }
        return nil
    }

    /// Waits until the gateway's services run, and so handle SIGTERM and
    /// SIGINT (the gateway listens a moment before that): the first
    /// "Starting service" line, which service lifecycle writes (at debug
    /// level) once it has trapped the signals.
    static func waitUntilHandlingSignals(_ process: ChildProcess) async {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !process.standardError.contains("[ServiceLifecycle] Starting service\n") {
            if await process.wait(timeout: .milliseconds(20)) != nil { return }
        }
    }

    /// Stops the gateway with SIGTERM (as a service manager would) and
    /// returns its exit status; then the simulator and the bus.
    @discardableResult
    func stop() async -> Int32? {
        await Self.waitUntilHandlingSignals(process)
        process.signal(SIGTERM)
        let status = await process.wait(timeout: .seconds(20))
        process.kill()
        await simulator.stop()
        simulator.connection.close()
        bus.daemon.stop()
        if ownsStateDirectory { try? FileManager.default.removeItem(atPath: stateDirectory) }
        return status
    }

    /// Kills the gateway with SIGKILL, as a crash or `kill -9`; then stops
    /// the simulator and the bus.
    func crash() async {
        process.kill()
        await simulator.stop()
        simulator.connection.close()
        bus.daemon.stop()
    }

    // MARK: HTTP

    /// One request with curl; the status, headers and body of the answer.
    /// `source`: the local address to connect from (another loopback
    /// address is another client).
    func request(
        _ method: String, _ path: String, json: String? = nil, body: [UInt8]? = nil, headers: [String: String] = [:],
        source: String? = nil
    ) async throws -> HTTPAnswer {
        var arguments = ["curl", "-sS", "-i", "-k", "--max-time", "60", "-X", method, "-H", "Expect:"]
        if let source { arguments += ["--interface", source] }
        var bodyFile: String?
        if let json {
            arguments += ["-H", "Content-Type: application/json", "--data-binary", json]
        } else if let body {
            let file = bus.daemon.directory + "/body-\(UInt64.random(in: 0...UInt64.max))"
            _ = FileManager.default.createFile(atPath: file, contents: Data(body))
            bodyFile = file
            arguments += ["--data-binary", "@" + file]
        }
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if method == "HEAD" { arguments += ["-I"] }
        arguments.append(baseURL + path)
        let curl = try ChildProcess(arguments)
        let status = await curl.wait(timeout: .seconds(70))
        if let bodyFile { try? FileManager.default.removeItem(atPath: bodyFile) }
        guard status == 0 else {
            throw GatewayTestError(
                """
                curl \(method) \(path) exited \(status.map(String.init) ?? "(still running)"): \(curl.standardError)
                the gateway's log ends with:
                \(process.standardError.suffix(1500))
                """)
        }
        return try HTTPAnswer(raw: curl.standardOutputBytes, path: String(path.prefix { $0 != "?" }))
    }

    /// Scans until BlueZ knows every one of `addresses` (a single short scan
    /// can miss a device on a loaded machine).
    func discover(_ addresses: String...) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let known = Set(try await get("/v1/devices").array.compactMap { $0["address"] as? String })
            if known.isSuperset(of: addresses) { return }
            _ = try await request("POST", "/v1/scan", json: #"{"duration_ms":300}"#)
        }
        throw GatewayTestError("the scan did not find \(addresses)")
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPAnswer {
        try await request("GET", path, headers: headers)
    }

    /// An SSE stream read by `curl -N` in the background.
    func stream(_ path: String, headers: [String: String] = [:]) throws -> EventStreamClient {
        var arguments = ["curl", "-sN"]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        return EventStreamClient(try ChildProcess(arguments + [baseURL + path]))
    }
}

struct GatewayTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
