import ArgumentParser
import Foundation
import GatewayCoreBluetooth
import GatewayVersion

/// `blegateway version`.
struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version", abstract: "Print this program's version, and with --url (or BLEGATEWAY_URL) the gateway's.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let remote = options.url != nil || ProcessInfo.processInfo.environment["BLEGATEWAY_URL"] != nil
        var gateway: GatewayJSON.Info?
        if remote {
            try await runClient {
                gateway = try await options.client().decode(GatewayJSON.Info.self, "GET", "/v1")
            }
        }
        if options.json {
            var document: [String: Any] = ["version": GatewayVersion.string]
            if let gateway { document["gateway"] = ["name": gateway.name, "version": gateway.version] }
            return Terminal.printJSON(document)
        }
        print("blegateway \(GatewayVersion.string)")
        if let gateway { print("gateway \(Terminal.safe(gateway.name)) \(Terminal.safe(gateway.version))") }
    }
}
