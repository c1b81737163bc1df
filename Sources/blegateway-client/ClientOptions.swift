import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// The options every client command shares: where the gateway is, and how to print.
struct ClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The gateway's base URL. [BLEGATEWAY_URL, default http://127.0.0.1:8080]", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The gateway's API key. [BLEGATEWAY_API_KEY]", valueName: "key"))
    var apiKey: String?

    @Option(help: ArgumentHelp("Use this adapter (default: the gateway's).", valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Print JSON for scripts (one document, or one line per event for commands that follow) instead of a table.")
    var json = false

    /// The options a manager takes: these, over the environment.
    var managerOptions: [String: Any] {
        var options: [String: Any] = [:]
        if let url { options[CBManagerOptionGatewayURLKey] = url }
        if let apiKey { options[CBManagerOptionGatewayAPIKeyKey] = apiKey }
        if let adapter { options[CBManagerOptionGatewayAdapterKey] = adapter }
        return options
    }

    func client() throws -> GatewayClient {
        do {
            return GatewayClient(location: try GatewayLocation(options: managerOptions))
        } catch {
            throw ClientFailure(error)
        }
    }

    var adapterQuery: [URLQueryItem] { adapter.map { [URLQueryItem(name: "adapter", value: $0)] } ?? [] }

    /// A central manager on a queue of its own, once the gateway's
    /// Bluetooth is on.
    func central() async throws -> CBCentralManager {
        let central = CBCentralManager(delegate: nil, queue: DispatchQueue(label: "blegateway.client"), options: managerOptions)
        do {
            try await central.poweredOn()
        } catch {
            central.invalidate()
            throw ClientFailure(error)
        }
        return central
    }

    /// The peripheral at `address`, its GATT tree discovered.
    func discoveredPeripheral(_ address: String) async throws -> (CBCentralManager, CBPeripheral) {
        let central = try await central()
        let peripheral = central.peripheral(address: try Self.address(address))
        do {
            _ = try await peripheral.discoverAll()
        } catch {
            throw ClientFailure(error)
        }
        return (central, peripheral)
    }

    /// A characteristic of a discovered peripheral by UUID (and service).
    static func characteristic(_ text: String, service: String?, of peripheral: CBPeripheral) throws -> CBCharacteristic {
        guard let uuid = CBUUID(validating: text) else { throw ValidationError("'\(text)' is not a UUID (2a37, or 128-bit)") }
        let serviceUUID = try service.map { text in
            guard let uuid = CBUUID(validating: text) else { throw ValidationError("'\(text)' is not a service UUID") }
            return uuid
        }
        let candidates = (peripheral.services ?? []).filter { serviceUUID == nil || $0.uuid == serviceUUID }
            .flatMap { $0.characteristics ?? [] }.filter { $0.uuid == uuid }
        guard let first = candidates.first else {
            throw ClientFailure(status: 3, "\(peripheral.address) has no characteristic \(uuid.uuidString)")
        }
        guard candidates.count == 1 else {
            throw ClientFailure(
                status: 4, "\(uuid.uuidString) is in \(candidates.count) services of \(peripheral.address): add --service")
        }
        return first
    }

    static func address(_ text: String) throws -> String {
        let hex = text.filter { $0 != ":" && $0 != "-" }
        guard hex.count == 12, hex.allSatisfy(\.isHexDigit) else {
            throw ValidationError("'\(text)' is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        var pairs: [String] = []
        var rest = Substring(hex.uppercased())
        while !rest.isEmpty {
            pairs.append(String(rest.prefix(2)))
            rest = rest.dropFirst(2)
        }
        return pairs.joined(separator: ":")
    }
}
