import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway events`: follow the gateway's event stream.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "Print the gateway's events (GET /v1/events) until Ctrl-C.",
        discussion: "One line an event: its id, type, device and data; with --json the event's JSON.\n\n" + ClientExitStatus.help)

    @OptionGroup var options: ClientOptions
    @Option(name: .customLong("type"), help: ArgumentHelp("Only events of this type (repeat).", valueName: "type"))
    var types: [String] = []
    @Option(help: "Only events about this device.") var device: String?
    @Option(help: "Resume after this event id (what was missed is replayed first).") var after: String?

    func run() async throws {
        try await runClient {
            var query: [URLQueryItem] = []
            if !types.isEmpty { query.append(URLQueryItem(name: "type", value: types.joined(separator: ","))) }
            if let device { query.append(URLQueryItem(name: "device", value: try ClientOptions.address(device))) }
            let stream = try await options.client().events("/v1/events", query: query, lastEventID: after)
            for try await event in stream {
                if options.json {
                    Terminal.line(Terminal.safe(event.data))
                } else {
                    let address = (try? event.decode(GatewayJSON.Event.self))?.address ?? "-"
                    Terminal.line(Terminal.row([event.id ?? "-", event.type, address, event.data], widths: [6, 20, 17]))
                }
            }
        }
    }
}
