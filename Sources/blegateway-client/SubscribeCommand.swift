import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway subscribe`: standing subscriptions.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe", abstract: "Subscribe to a characteristic for good (POST /v1/subscriptions), list, or end one.",
        discussion: """
            A standing subscription is held across reconnects and gateway restarts; its values are \
            characteristic-value events (`blegateway events --type characteristic-value`). Without \
            arguments, lists them; --delete ID ends one.

            \(ClientExitStatus.help)
            """)

    @OptionGroup var options: ClientOptions
    @Argument(help: "The device's Bluetooth address.") var address: String?
    @Argument(help: "The characteristic's UUID.") var characteristic: String?
    @Option(help: ArgumentHelp("The service it is in.", valueName: "uuid")) var service: String?
    @Flag(help: "Ask for indications rather than notifications.") var indicate = false
    @Option(help: "End the standing subscription with this id.") var delete: Int?

    func validate() throws {
        if delete != nil, address != nil { throw ValidationError("--delete takes no address") }
        if address != nil, characteristic == nil { throw ValidationError("name the characteristic too") }
        if let characteristic, CBUUID(validating: characteristic) == nil { throw ValidationError("'\(characteristic)' is not a UUID") }
    }

    func run() async throws {
        try await runClient {
            let client = try options.client()
            if let delete {
                try await client.send("DELETE", "/v1/subscriptions/\(delete)")
                if options.json { Terminal.printJSON(["deleted": delete]) }
                return
            }
            let data: Data
            if let address, let characteristic {
                var body = ["device": try ClientOptions.address(address), "characteristic": characteristic, "mode": indicate ? "indicate" : "notify"]
                if let service { body["service"] = service }
                if let adapter = options.adapter { body["adapter"] = adapter }
                data = try await client.send("POST", "/v1/subscriptions", json: body)
            } else {
                data = try await client.send("GET", "/v1/subscriptions")
            }
            if options.json { return Terminal.printRaw(data) }
            let subscriptions: [GatewayJSON.StandingSubscription] =
                address == nil
                ? try JSONDecoder.snakeCase.decode([GatewayJSON.StandingSubscription].self, from: data)
                : [try JSONDecoder.snakeCase.decode(GatewayJSON.StandingSubscription.self, from: data)]
            print(
                Terminal.table(
                    ["ID", "DEVICE", "CHARACTERISTIC", "STATUS"],
                    subscriptions.map { [String($0.id), $0.device, $0.characteristic, $0.status] }))
        }
    }
}
