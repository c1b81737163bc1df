import Foundation
import Synchronization

/// What a scan reads: the gateway's own scan stream (`GET /v1/scan`, which
/// filters and drops duplicates itself), or through a fleet the fleet's
/// event stream (`GET /v1/fleet/events`), whose `device-discovered` and
/// `device-updated` events carry each advertisement as the gateway that
/// heard it saw it; there the filter and the duplicates are applied here.
final class ScanReports: Sendable {
    let stream: EventStream
    private let fleet: Bool
    private let services: Set<CBUUID>
    private let duplicates: Bool
    /// Through a fleet, the devices reported so far (without duplicates).
    private let reported = Mutex(Set<String>())

    private init(stream: EventStream, fleet: Bool, services: [CBUUID]?, duplicates: Bool) {
        self.stream = stream
        self.fleet = fleet
        self.services = Set(services ?? [])
        self.duplicates = duplicates
    }

    static func open(
        _ gateway: GatewayClient, fleet: Bool, adapterQuery: [URLQueryItem], services: [CBUUID]?, duplicates: Bool
    ) async throws(GatewayError) -> ScanReports {
        let stream: EventStream
        if fleet {
            stream = try await gateway.events("/v1/fleet/events")
        } else {
            var query = adapterQuery + [URLQueryItem(name: "duplicates", value: duplicates ? "true" : "false")]
            query += (services ?? []).map { URLQueryItem(name: "service", value: $0.gatewayString) }
            stream = try await gateway.events("/v1/scan", query: query)
        }
        return ScanReports(stream: stream, fleet: fleet, services: services, duplicates: duplicates)
    }

    /// The device an event reports to the app, if it reports one.
    func device(in event: ServerSentEvent) -> GatewayJSON.Device? {
        guard fleet else {
            guard event.type == "discovered" || (duplicates && event.type == "updated") else { return nil }
            return (try? event.decode(GatewayJSON.ScanEvent.self))?.device
        }
        guard event.type == "device-discovered" || event.type == "device-updated",
            let device = (try? event.decode(GatewayJSON.Event.self))?.device
        else { return nil }
        let advertised = Set((device.serviceUuids ?? []).compactMap(CBUUID.init(validating:)))
        guard services.isEmpty || !services.isDisjoint(with: advertised) else { return nil }
        guard duplicates || reported.withLock({ $0.insert(device.address).inserted }) else { return nil }
        return device
    }
}
