import Foundation
import Glibc
import TestSupport
import Testing

/// The peripheral role across outages, with the gateway and `bluez-sim` as
/// separate processes and the simulated remote central driven through the
/// control interface with busctl.
@Suite struct PeripheralFaultTests {
    @Test(.timeLimit(.minutes(3))) func applicationsAndAdvertisementsComeBackAfterTheBusRestarts() async throws {
        let rig = try await FaultRig.start()
        let application = """
            {"services":[{"uuid":"180d","characteristics":[{"uuid":"2a37","flags":["read","notify"],"value":"0048"}]}]}
            """
        let created = try await rig.request("POST", "/v1/peripheral/applications", json: application)
        #expect(created.status == 201, "\(created)")
        let advertised = try await rig.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"back"}"#)
        #expect(advertised.status == 201, "\(advertised)")
        #expect(try await rig.control("CentralRead", "ss", "hci0", "2a37").contains("ay 2 0 72"))

        rig.bus.kill()
        #expect(await rig.simulator?.wait(timeout: .seconds(20)) == 1)
        try await rig.bus.start()
        try await rig.startSimulator()
        _ = try await rig.waitFor("/health") { $0.status == 200 }

        // A new connection, new objects, registered with the new bluetoothd.
        let deadline = ContinuousClock.now + .seconds(30)
        var applications = try await rig.control("RegisteredApplications")
        var advertisements = try await rig.control("RegisteredAdvertisements")
        while !(applications.contains("/org/blegateway/peripheral/app1") && advertisements.contains("back")),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
            applications = try await rig.control("RegisteredApplications")
            advertisements = try await rig.control("RegisteredAdvertisements")
        }
        #expect(applications.contains("/org/blegateway/peripheral/app1"), "\(applications)")
        #expect(advertisements.contains("back"), "\(advertisements)")
        #expect(try await rig.control("CentralRead", "ss", "hci0", "2a37").contains("ay 2 0 72"))
        let listed = try await rig.get("/v1/peripheral/applications")
        #expect(listed.array.first?["registered"] as? Bool == true, "\(listed)")

        // Deleting unregisters them from bluetoothd at once.
        #expect(try await rig.request("DELETE", "/v1/peripheral/applications/app1").status == 204)
        #expect(try await rig.request("DELETE", "/v1/peripheral/advertisements/adv1").status == 204)
        #expect(try await rig.control("RegisteredApplications").contains("as 0"))
        #expect(try await rig.control("RegisteredAdvertisements").contains("a(sa{sv}) 0"))
        #expect(await rig.stop() == 0)
    }

    @Test(.timeLimit(.minutes(3))) func theGatewayUnregistersEverythingWhenItStops() async throws {
        let rig = try await FaultRig.start()
        let application = #"{"services":[{"uuid":"180f","characteristics":[{"uuid":"2a19","flags":["read"],"value":"64"}]}]}"#
        #expect(try await rig.request("POST", "/v1/peripheral/applications", json: application).status == 201)
        #expect(try await rig.request("POST", "/v1/peripheral/advertisements", json: #"{"local_name":"bye"}"#).status == 201)
        rig.gateway.signal(SIGTERM)
        #expect(await rig.gateway.wait(timeout: .seconds(20)) == 0)
        // The gateway said so itself: UnregisterApplication and
        // UnregisterAdvertisement went before its connection closed.
        #expect(rig.gateway.standardError.contains("unregistered 1 application(s) and 1 advertisement(s)"), "\(rig.gateway.standardError.suffix(800))")
        #expect(try await rig.control("RegisteredApplications").contains("as 0"))
        _ = await rig.stop()
    }
}
