import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway devices`: the devices the gateway knows.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the devices BlueZ knows: discovered, paired or connected (GET /v1/devices).",
        discussion: ClientExitStatus.help)

    @OptionGroup var options: ClientOptions

    @Flag(help: "Only connected devices.")
    var connected = false

    func run() async throws {
        try await runClient {
            var query = options.adapterQuery
            if connected { query.append(URLQueryItem(name: "connected", value: "true")) }
            let data = try await options.client().send("GET", "/v1/devices", query: query)
            if options.json { return Terminal.printRaw(data) }
            let devices = try JSONDecoder.snakeCase.decode([GatewayJSON.Device].self, from: data)
            print(
                Terminal.table(
                    ["ADDRESS", "RSSI", "CONNECTED", "PAIRED", "NAME"],
                    devices.map { device in
                        [
                            device.address, device.rssi.map(String.init) ?? "-", device.connected ? "yes" : "no",
                            device.paired ? "yes" : "no", device.name ?? device.alias ?? "-",
                        ]
                    }))
        }
    }
}

extension JSONDecoder {
    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}
