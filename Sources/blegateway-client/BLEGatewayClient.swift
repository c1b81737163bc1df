import ArgumentParser
import GatewayVersion

/// `blegateway-client`: the client commands of `blegateway` (scan, read,
/// notify, ...), which `blegateway COMMAND` hands over to. A program of its
/// own because its HTTP client (URLSession, in FoundationNetworking) brings
/// libcurl, Foundation and ICU, which the server then need not map.
@main
struct BLEGatewayClient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        // Users type `blegateway scan`: usage and help say so.
        commandName: "blegateway",
        abstract: "The client commands of blegateway: a running gateway's devices from the command line.",
        discussion: """
            Clients of a running gateway (--url, or BLEGATEWAY_URL; default http://127.0.0.1:8080), \
            as bluetoothctl is of bluetoothd. `blegateway COMMAND` runs them; `blegateway serve` is \
            the gateway itself.
            """,
        version: GatewayVersion.string,
        subcommands: [
            ScanCommand.self, DevicesCommand.self, ConnectCommand.self, DisconnectCommand.self, GATTCommand.self,
            ReadCommand.self, WriteCommand.self, NotifyCommand.self, PairCommand.self, EventsCommand.self,
            KeepCommand.self, SubscribeCommand.self, VersionCommand.self,
        ])
}
