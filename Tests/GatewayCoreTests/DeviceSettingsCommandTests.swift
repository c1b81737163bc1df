import BlueZ
import GatewayCore
import Testing

/// Changing a device's `trusted` and `blocked` settings through the core,
/// on the simulator.
@Suite struct DeviceSettingsCommandTests {
    @Test func theSettingsGivenChangeAndTheOthersStay() async throws {
        try await withCoreHarness { harness in
            let plug = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            var device = try await harness.core.changeDeviceSettings(ChangeDeviceSettingsCommand(device: plug, trusted: true))
            #expect(device.trusted && !device.blocked)
            device = try await harness.core.changeDeviceSettings(ChangeDeviceSettingsCommand(device: plug, blocked: true))
            #expect(device.trusted && device.blocked)
            device = try await harness.core.changeDeviceSettings(
                ChangeDeviceSettingsCommand(device: plug, trusted: false, blocked: false))
            #expect(!device.trusted && !device.blocked)
            #expect(try harness.central.device(plug.address, adapter: "hci0").trusted == false)
        }
    }

    @Test func anUnknownDeviceIsBlueZsNotFound() async throws {
        try await withCoreHarness { harness in
            let stranger = try DeviceTarget(parsing: "00:11:22:33:44:55", adapter: "hci0")
            let error = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.changeDeviceSettings(ChangeDeviceSettingsCommand(device: stranger, trusted: true))
            }
            #expect(error?.code == .notFound)
        }
    }
}
