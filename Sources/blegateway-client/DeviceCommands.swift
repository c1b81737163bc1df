import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway connect`, `disconnect`, `pair`: one request about a device,
/// answered with the device.
struct DeviceAction {
    var method: String
    var suffix: String

    func run(_ options: ClientOptions, address: String, timeout: Double?) async throws {
        let address = try ClientOptions.address(address)
        var query = options.adapterQuery
        if let timeout { query.append(URLQueryItem(name: "timeout_ms", value: String(Int(timeout * 1000)))) }
        let data = try await options.client().send(method, "/v1/devices/\(address)/\(suffix)", query: query)
        if options.json { return Terminal.printRaw(data) }
        let device = try JSONDecoder.snakeCase.decode(GatewayJSON.Device.self, from: data)
        print(
            Terminal.table(
                ["ADDRESS", "CONNECTED", "PAIRED", "NAME"],
                [[device.address, device.connected ? "yes" : "no", device.paired ? "yes" : "no", device.name ?? "-"]]))
    }
}

/// A timeout in seconds, as the gateway takes them (1 ms to 120 s).
struct TimeoutOption: ParsableArguments {
    @Option(help: "Give up after this many seconds (at most 120; default: the gateway's).")
    var timeout: Double?

    func validate() throws {
        if let timeout, !(0.001...120).contains(timeout) { throw ValidationError("--timeout must be 0.001 to 120 seconds") }
    }
}

struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect", abstract: "Connect and resolve services (POST /v1/devices/ADDRESS/connect); `keep` keeps it connected.",
        discussion: ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @OptionGroup var timeout: TimeoutOption
    @Argument(help: "The device's Bluetooth address.") var address: String

    func run() async throws {
        try await runClient { try await DeviceAction(method: "POST", suffix: "connect").run(options, address: address, timeout: timeout.timeout) }
    }
}

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect", abstract: "Disconnect (POST /v1/devices/ADDRESS/disconnect).", discussion: ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @OptionGroup var timeout: TimeoutOption
    @Argument(help: "The device's Bluetooth address.") var address: String

    func run() async throws {
        try await runClient {
            try await DeviceAction(method: "POST", suffix: "disconnect").run(options, address: address, timeout: timeout.timeout)
        }
    }
}

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "Pair and bond (POST /v1/devices/ADDRESS/pair).",
        discussion: """
            Questions the pairing asks (a passkey) come as pairing-request events: follow them with \
            `blegateway events --type pairing-request`.

            \(ClientExitStatus.help)
            """)

    @OptionGroup var options: ClientOptions
    @OptionGroup var timeout: TimeoutOption
    @Argument(help: "The device's Bluetooth address.") var address: String

    func run() async throws {
        try await runClient { try await DeviceAction(method: "POST", suffix: "pair").run(options, address: address, timeout: timeout.timeout) }
    }
}
