import BlueZSimulator
import Foundation
import Testing
import TestSupport

/// Connection slots across the fleet (docs/fleet.md, "Connection slots"):
/// each gateway publishes its slots, and a fleet-kept device is never
/// handed to a gateway with none free.
@Suite(.serialized) struct FleetSlotTests {
    typealias Fleet = FleetRoamTests.Fleet
    static let strap = FleetRoamTests.strap
    static let bystander = FleetRoamTests.bystander

    /// g-a's slots as g-b's `/v1/fleet/gateways` shows them.
    static func slots(of id: String, seenFrom gateway: GatewayUnderTest, free: Int) async -> (Bool, [[String: Any]]?) {
        await FleetHTTPTests.poll(timeout: .seconds(30)) {
            let gateways = try await gateway.get("/v1/fleet/gateways").array
            return gateways.first { $0["id"] as? String == id }?["connection_slots"] as? [[String: Any]] ?? []
        } until: { $0.first?["free"] as? Int == free }
    }

    @Test func aGatewayWithNoFreeSlotIsPassedOverUntilOneFrees() async throws {
        // g-a hears the strap 25 dB better, but holds one connection and
        // has its bystander connected.
        let fleet = try await Fleet.start(
            [("g-a", -50), ("g-b", -75)], arguments: ["g-a": ["--connection-slots", "1"]], bystanderAt: "g-a")
        let a = try fleet.gateway("g-a")
        let b = try fleet.gateway("g-b")
        let connect = try await a.request("POST", "/v1/devices/\(Self.bystander)/connect")
        #expect(connect.status == 200, "\(connect)")
        var (shown, slots) = await Self.slots(of: "g-a", seenFrom: b, free: 0)
        #expect(shown, "\(slots ?? [])")
        let first = slots?.first ?? [:]
        #expect(first["adapter"] as? String == "hci0" && first["limit"] as? Int == 1 && first["used"] as? Int == 1, "\(first)")

        // Kept by the fleet: g-b holds it, and keeps it (no hand-over to g-a
        // that g-a could not take, and back).
        let keep = try await b.request("PUT", "/v1/fleet/devices/\(Self.strap)/keep", json: #"{"fleet":true}"#)
        #expect(keep.status == 202, "\(keep)")
        var (held, view) = await FleetRoamTests.view(b) {
            FleetRoamTests.holder($0) == "g-b" && FleetRoamTests.connectedOn($0) == ["g-b"]
        }
        #expect(held, "\(view ?? [:])")
        try await Task.sleep(for: .seconds(8))
        view = try await b.get("/v1/fleet/devices/\(Self.strap)").object
        #expect(FleetRoamTests.holder(view ?? [:]) == "g-b" && view?["owner_epoch"] as? Int == 1, "\(view ?? [:])")
        #expect(
            fleet.connects("g-b") == 1 && fleet.connects("g-a") == 0,
            "\(fleet.lines.filter { $0.contains("/any/owner/") || $0.contains("/connection ") }.joined(separator: "\n").suffix(3000))")

        // A slot frees on g-a: g-b hands the strap over.
        let disconnect = try await a.request("POST", "/v1/devices/\(Self.bystander)/disconnect")
        #expect(disconnect.status == 200, "\(disconnect)")
        (shown, slots) = await Self.slots(of: "g-a", seenFrom: b, free: 1)
        #expect(shown, "\(slots ?? [])")
        (held, view) = await FleetRoamTests.view(b) {
            FleetRoamTests.holder($0) == "g-a" && FleetRoamTests.connectedOn($0) == ["g-a"]
        }
        #expect(held, "\(view ?? [:])\n\(fleet.lines.filter { $0.contains("/any/owner/") }.joined(separator: "\n").suffix(3000))")
        #expect(fleet.mostConnectedAtOnce() == 1, "\(fleet.watcher.standardOutput.suffix(4000))")
        await fleet.stop()
    }

    /// A holder whose adapter goes off has lost the device (it cannot reach
    /// it however long it waits) and gives it to a gateway that hears it;
    /// with no powered adapter it publishes no slot and is never handed the
    /// device back while off (it took it back and held it, unconnected,
    /// on the real bluetoothd).
    @Test func aHolderWhoseAdapterGoesOffGivesTheDeviceUpAndIsNotHandedItBack() async throws {
        let fleet = try await Fleet.start([("g-a", -50), ("g-b", -72)])
        let a = try fleet.gateway("g-a")
        let b = try fleet.gateway("g-b")
        let keep = try await b.request("PUT", "/v1/fleet/devices/\(Self.strap)/keep", json: #"{"fleet":true}"#)
        #expect(keep.status == 202, "\(keep)")
        var (held, view) = await FleetRoamTests.view(b) {
            FleetRoamTests.holder($0) == "g-a" && FleetRoamTests.connectedOn($0) == ["g-a"]
        }
        #expect(held, "\(view ?? [:])")

        let off = try await a.request("PATCH", "/v1/adapters/hci0", json: #"{"powered":false}"#)
        #expect(off.status == 200, "\(off)")
        (held, view) = await FleetRoamTests.view(b) {
            FleetRoamTests.holder($0) == "g-b" && FleetRoamTests.connectedOn($0) == ["g-b"]
        }
        #expect(held, "\(view ?? [:])\n\(fleet.lines.filter { $0.contains("/any/owner/") }.joined(separator: "\n").suffix(3000))")
        let (emptied, slots) = await FleetHTTPTests.poll(timeout: .seconds(30)) {
            try await b.get("/v1/fleet/gateways").array.first { $0["id"] as? String == "g-a" }?["connection_slots"]
                as? [[String: Any]] ?? [["missing": true]]
        } until: { $0.isEmpty }
        #expect(emptied, "g-a publishes no slot while hci0 is off: \(slots ?? [])")
        try await Task.sleep(for: .seconds(4))
        view = try await b.get("/v1/fleet/devices/\(Self.strap)").object
        #expect(FleetRoamTests.holder(view ?? [:]) == "g-b", "\(view ?? [:])")
        #expect(fleet.mostConnectedAtOnce() == 1, "\(fleet.watcher.standardOutput.suffix(4000))")
        await fleet.stop()
    }
}
