import ArgumentParser
import Foundation
import GatewayCoreBluetooth

/// `blegateway scan`: what advertises nearby, for a while.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "Scan and list the devices heard (GET /v1/scan).",
        discussion: "Devices are printed as they are found.\n\n" + ClientExitStatus.help)

    @OptionGroup var options: ClientOptions

    @Option(name: .customLong("service"), help: ArgumentHelp("Only devices advertising this service (repeat).", valueName: "uuid"))
    var services: [String] = []

    @Option(help: "How long to scan, in seconds.")
    var duration: Double = 5

    @Flag(help: "Report every advertisement, not each device once.")
    var duplicates = false

    func validate() throws {
        guard duration > 0, duration <= 3600 else { throw ValidationError("--duration must be above 0 and at most 3600 seconds") }
        for service in services where CBUUID(validating: service) == nil {
            throw ValidationError("--service: '\(service)' is not a UUID")
        }
    }

    func run() async throws {
        try await runClient {
            let central = try await options.central()
            defer { central.invalidate() }
            let uuids = services.compactMap(CBUUID.init(validating:))
            let found = try await central.discoveries(withServices: uuids.isEmpty ? nil : uuids, allowDuplicates: duplicates)
            let widths = [17, 5, 24]
            if !options.json { Terminal.line(Terminal.row(["ADDRESS", "RSSI", "NAME", "SERVICES"], widths: widths)) }
            let scan = Task {
                for try await discovery in found {
                    let device = discovery.device
                    if options.json {
                        Terminal.printJSON([
                            "address": device.address, "name": device.name ?? NSNull(), "rssi": discovery.rssi,
                            "service_uuids": device.serviceUuids ?? [],
                        ] as [String: Any])
                    } else {
                        let services = (device.serviceUuids ?? []).compactMap(CBUUID.init(validating:)).map(\.uuidString)
                        Terminal.line(
                            Terminal.row(
                                [device.address, String(discovery.rssi), device.name ?? "-", services.joined(separator: ",")],
                                widths: widths))
                    }
                }
            }
            try? await Task.sleep(for: .seconds(duration))
            scan.cancel()
            try await scan.value
        }
    }
}
