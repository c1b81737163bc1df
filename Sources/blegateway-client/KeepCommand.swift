import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway keep`: keep a device connected, list, or release.
struct KeepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keep", abstract: "Keep a device connected across losses and restarts (PUT /v1/devices/ADDRESS/keep).",
        discussion: """
            Without an address, lists the kept devices. With --release, stops keeping it (the connection \
            stays as it is; `disconnect` ends it).

            \(ClientExitStatus.help)
            """)

    @OptionGroup var options: ClientOptions
    @Argument(help: "The device's Bluetooth address.") var address: String?
    @Flag(help: "Stop keeping the device connected.") var release = false
    @Option(help: "Give up after this many failed attempts in a row.") var maxAttempts: Int?

    func validate() throws {
        if release && address == nil { throw ValidationError("--release needs the device's address") }
        if let maxAttempts, !(1...1_000_000).contains(maxAttempts) { throw ValidationError("--max-attempts must be 1 to 1000000") }
    }

    func run() async throws {
        try await runClient {
            let client = try options.client()
            guard let address else {
                let data = try await client.send("GET", "/v1/kept-connections")
                if options.json { return Terminal.printRaw(data) }
                return Self.print(try JSONDecoder.snakeCase.decode([GatewayJSON.KeptConnection].self, from: data))
            }
            let path = "/v1/devices/\(try ClientOptions.address(address))/keep"
            if release {
                try await client.send("DELETE", path, query: options.adapterQuery)
                if options.json { Terminal.printJSON(["released": true]) }
                return
            }
            let data = try await client.send(
                "PUT", path, query: options.adapterQuery, json: maxAttempts.map { ["max_attempts": $0] } ?? [:])
            if options.json { return Terminal.printRaw(data) }
            Self.print([try JSONDecoder.snakeCase.decode(GatewayJSON.KeptConnection.self, from: data)])
        }
    }

    static func print(_ kept: [GatewayJSON.KeptConnection]) {
        Swift.print(Terminal.table(["ADDRESS", "ADAPTER", "STATUS"], kept.map { [$0.address, $0.adapter, $0.status] }))
    }
}
