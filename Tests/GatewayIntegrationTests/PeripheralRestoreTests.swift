import BlueZSimulator
import Foundation
import Glibc
import TestSupport
import Testing

/// With a state directory, what the peripheral role publishes outlives the
/// gateway: after a `kill -9`, the next gateway publishes the same
/// applications and advertisements under the same ids, with the values
/// clients set; a DELETE ends them for good.
@Suite struct PeripheralRestoreTests {
    static let heartRate = GATTUUID("2a37")!
    static let control = GATTUUID("2a39")!

    @Test(.timeLimit(.minutes(3))) func publishedApplicationsAndAdvertisementsComeBackAfterAKill9() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: PeripheralTests.application)
        #expect(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? String)
        // One published and withdrawn: a DELETE is final.
        let gone = try await gateway.request("POST", "/v1/peripheral/applications?adapter=hci0", json: PeripheralTests.application)
        let goneID = try #require(gone.object["id"] as? String)
        #expect(try await gateway.request("DELETE", "/v1/peripheral/applications/\(goneID)").status == 204)
        let advertised = try await gateway.request(
            "POST", "/v1/peripheral/advertisements", json: #"{"local_name":"again","service_uuids":["180d"]}"#)
        #expect(advertised.status == 201, "\(advertised)")
        let advertisement = try #require(advertised.object["id"] as? String)
        // A value the gateway acknowledged.
        let put = try await gateway.request(
            "PUT", "/v1/peripheral/applications/\(id)/characteristics/2a37/value", json: #"{"value":"0050"}"#)
        #expect(put.status == 200, "\(put)")
        await gateway.crash()

        let restarted = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(
            restarted.process.standardError.contains("publishing 1 application(s) and 1 advertisement(s), as before the restart"),
            "\(restarted.process.standardError.suffix(2000))")
        // The simulator is new, as bluetoothd is after the gateway's
        // registrations ended with its bus connection: the gateway
        // registered everything again.
        #expect(await eventually { await restarted.simulator.registeredApplications().count == 1 })
        let advertisements = await restarted.simulator.registeredAdvertisements()
        #expect(advertisements.count == 1)
        #expect(advertisements.first?.properties["LocalName"]?.string == "again")
        #expect(try await restarted.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x50])
        #expect(try await restarted.simulator.centralRead(adapter: "hci0", characteristic: Self.control) == [0x00])
        let listed = try await restarted.get("/v1/peripheral/applications")
        #expect(listed.array.compactMap { $0["id"] as? String } == [id], "\(listed)")
        #expect(listed.array.first?["registered"] as? Bool == true)
        #expect(try await restarted.get("/v1/peripheral/advertisements/\(advertisement)").status == 200)
        #expect(try await restarted.get("/v1/peripheral/applications/\(goneID)").status == 404)
        // New ids go on after the restored ones.
        let next = try await restarted.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"next"}"#)
        #expect(next.status == 201 && next.object["id"] as? String != advertisement, "\(next)")

        // Withdrawn, they stay withdrawn after the next restart.
        #expect(try await restarted.request("DELETE", "/v1/peripheral/applications/\(id)").status == 204)
        #expect(try await restarted.request("DELETE", "/v1/peripheral/advertisements/\(advertisement)").status == 204)
        #expect(try await restarted.request("DELETE", "/v1/peripheral/advertisements/\(try #require(next.object["id"] as? String))").status == 204)
        await restarted.crash()
        let third = try await GatewayUnderTest.start(stateDirectory: directory)
        #expect(try await third.get("/v1/peripheral/applications").array.isEmpty)
        #expect(try await third.get("/v1/peripheral/advertisements").array.isEmpty)
        #expect(await third.simulator.registeredApplications().isEmpty)
        #expect(await third.simulator.registeredAdvertisements().isEmpty)
        await third.stop()
    }

    @Test(.timeLimit(.minutes(3))) func whatIsRestoredBeforeBluetoothdRunsIsRegisteredWhenItStarts() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: PeripheralTests.application)
        let id = try #require(created.object["id"] as? String)
        #expect(try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"later"}"#).status == 201)
        await gateway.crash()

        // The gateway starts before bluetoothd (as at boot).
        let restarted = try await GatewayUnderTest.start(stateDirectory: directory) { simulator in
            try await simulator.stopBluetoothd()
        }
        let events = try restarted.stream("/v1/peripheral/events?type=reregistered")
        let waiting = try await restarted.get("/v1/peripheral/applications/\(id)")
        #expect(waiting.status == 200 && waiting.object["registered"] as? Bool == false, "\(waiting)")
        try await restarted.simulator.startBluetoothd()
        #expect(await events.waitFor(2, of: "reregistered").allSatisfy { $0.json["error"] == nil })
        #expect(await restarted.simulator.registeredApplications().count == 1)
        #expect(await restarted.simulator.registeredAdvertisements().first?.properties["LocalName"]?.string == "later")
        #expect(try await restarted.get("/v1/peripheral/applications/\(id)").object["registered"] as? Bool == true)
        #expect(try await restarted.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x48])
        events.close()
        await restarted.stop()
    }

    @Test(.timeLimit(.minutes(3))) func whatWaitsForItsAdapterIsRegisteredWhenTheAdapterIsThere() async throws {
        let directory = try GatewayUnderTest.makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = try await GatewayUnderTest.start(stateDirectory: directory)
        let created = try await gateway.request("POST", "/v1/peripheral/applications", json: PeripheralTests.application)
        let id = try #require(created.object["id"] as? String)
        #expect(try await gateway.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"plugged"}"#).status == 201)
        await gateway.crash()

        // bluetoothd runs, but the controller attaches only later (as a
        // UART controller at boot, or a USB adapter plugged in).
        let restarted = try await GatewayUnderTest.start(stateDirectory: directory) { simulator in
            try await simulator.setAdapterPresent(false, adapter: "hci0")
        }
        let events = try restarted.stream("/v1/peripheral/events?type=reregistered")
        #expect(try await restarted.get("/v1/peripheral/applications/\(id)").object["registered"] as? Bool == false)
        try await restarted.simulator.setAdapterPresent(true, adapter: "hci0")
        #expect(await events.waitFor(2, of: "reregistered").allSatisfy { $0.json["error"] == nil })
        #expect(await restarted.simulator.registeredApplications().count == 1)
        #expect(await restarted.simulator.registeredAdvertisements().first?.properties["LocalName"]?.string == "plugged")
        #expect(try await restarted.simulator.centralRead(adapter: "hci0", characteristic: Self.heartRate) == [0x00, 0x48])

        // Unplugged and plugged in again while the gateway runs.
        try await restarted.simulator.setAdapterPresent(false, adapter: "hci0")
        #expect(try await eventually {
            try await restarted.get("/v1/peripheral/applications/\(id)").object["registered"] as? Bool == false
        })
        try await restarted.simulator.setAdapterPresent(true, adapter: "hci0")
        #expect(await events.waitFor(4, of: "reregistered").allSatisfy { $0.json["error"] == nil })
        #expect(await restarted.simulator.registeredApplications().count == 1)
        #expect(await restarted.simulator.registeredAdvertisements().count == 1)
        #expect(try await restarted.get("/v1/peripheral/applications/\(id)").object["registered"] as? Bool == true)
        events.close()
        await restarted.stop()
    }
}
