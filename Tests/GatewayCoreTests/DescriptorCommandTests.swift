import BlueZ
import GatewayCore
import Testing

/// Reading and writing descriptors through the core, on the simulator.
@Suite struct DescriptorCommandTests {
    @Test func aDescriptorNamedWrongNamesDescriptor() throws {
        let device = try DeviceTarget(parsing: CoreHarness.plug, adapter: nil)
        let characteristic = try CharacteristicTarget(device: device, parsing: CoreHarness.relay, service: nil)
        #expect(try DescriptorTarget(characteristic: characteristic, parsing: "2901").selector
            == .uuid(try BluetoothUUID(parsing: "2901"), service: nil))
        #expect(try DescriptorTarget(characteristic: characteristic, parsing: "handle:0x20").selector == .handle(32))
        do {
            _ = try DescriptorTarget(characteristic: characteristic, parsing: "user-description")
            Issue.record("a descriptor that is not a UUID was taken")
        } catch {
            guard case .invalidParameter(let name, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(name == "descriptor")
        }
    }

    @Test func aDescriptorIsReadAndAFailureIsBlueZs() async throws {
        try await withCoreHarness { harness in
            let device = try await harness.connected(CoreHarness.plug)
            let relay = try CharacteristicTarget(device: device, parsing: CoreHarness.relay, service: nil)
            let description = try DescriptorTarget(characteristic: relay, parsing: "2901")
            let value = try await harness.core.readDescriptor(
                ReadDescriptorCommand(descriptor: description, timeout: .seconds(10)))
            #expect(String(decoding: value, as: UTF8.self) == "Relay")
            // From an offset, as ReadValue's "offset" option gives it.
            let tail = try await harness.core.readDescriptor(ReadDescriptorCommand(descriptor: description, offset: 2))
            #expect(String(decoding: tail, as: UTF8.self) == "lay")

            // The relay has no Characteristic Presentation Format: BlueZ's
            // error, passed through for the door to map.
            let absent = try DescriptorTarget(characteristic: relay, parsing: "2904")
            let failure = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.readDescriptor(ReadDescriptorCommand(descriptor: absent))
            }
            #expect(failure?.code == .notFound, "\(String(describing: failure))")
        }
    }

    @Test func aDescriptorCommandGoesToItsAdapterOrTheCoresDefault() async throws {
        // The core's default adapter is one bluetoothd does not have: a
        // command that names none goes there and fails; one that names
        // hci0 reaches the device.
        try await withCoreHarness(defaultAdapter: "hci7") { harness in
            _ = try await harness.connected(CoreHarness.plug, adapter: "hci0")
            let onDefault = try CharacteristicTarget(
                device: try DeviceTarget(parsing: CoreHarness.plug, adapter: nil), parsing: CoreHarness.relay, service: nil)
            let elsewhere = await bluezFailure { () async throws(GatewayCommandError) in
                _ = try await harness.core.readDescriptor(
                    ReadDescriptorCommand(descriptor: try DescriptorTarget(characteristic: onDefault, parsing: "2901")))
            }
            #expect(elsewhere?.code == .notFound, "\(String(describing: elsewhere))")
            #expect(elsewhere?.message.contains("hci7") == true, "\(String(describing: elsewhere))")
            let relay = try CharacteristicTarget(
                device: try DeviceTarget(parsing: CoreHarness.plug, adapter: "hci0"), parsing: CoreHarness.relay, service: nil)
            let description = try DescriptorTarget(characteristic: relay, parsing: "2901")
            let read = try await harness.core.readDescriptor(ReadDescriptorCommand(descriptor: description))
            #expect(String(decoding: read, as: UTF8.self) == "Relay")
            // The user description is read-only: the peripheral refuses the
            // write with its ATT code, which the core passes through.
            let refused = await bluezFailure { () async throws(GatewayCommandError) in
                try await harness.core.writeDescriptor(
                    WriteDescriptorCommand(descriptor: description, value: Array("Pump".utf8), timeout: .seconds(10)))
            }
            #expect(refused?.code == .notPermitted, "\(String(describing: refused))")
        }
    }
}
