import BlueZ
import GatewayCore
import Testing

/// The core's reading of a command's inputs: each mistake a typed error
/// that names the input as the doors name it, with the reason they show.
@Suite struct CommandInputTests {
    /// The name and reason of an `invalidParameter`, or nil for any other
    /// outcome (success included).
    private func invalidParameter(_ body: () throws(GatewayCommandError) -> Void) -> (name: String, reason: String)? {
        do {
            try body()
            return nil
        } catch {
            guard case .invalidParameter(let name, let reason) = error else { return nil }
            return (name, reason)
        }
    }

    @Test func aDeviceTargetTakesAnyAddressSpellingAndAnAdapterName() throws {
        let target = try DeviceTarget(parsing: "c4-7c-8d-6a-3e-01", adapter: "hci1")
        #expect(target.address.description == "C4:7C:8D:6A:3E:01")
        #expect(target.adapter == "hci1")
        #expect(try DeviceTarget(parsing: "C4:7C:8D:6A:3E:01", adapter: nil).adapter == nil)
    }

    @Test(arguments: ["", "nonsense", "C4:7C:8D:6A:3E", "C4:7C:8D:6A:3E:01:02", "G4:7C:8D:6A:3E:01"])
    func aBadAddressNamesAddress(_ text: String) {
        let failure = invalidParameter { () throws(GatewayCommandError) in _ = try DeviceTarget(parsing: text, adapter: "hci0") }
        #expect(failure?.name == "address", "\(text)")
        #expect(failure?.reason.isEmpty == false)
    }

    @Test(arguments: ["wlan0", "hci", "hci0/x", "HCI0", ""])
    func aBadAdapterNamesAdapter(_ name: String) {
        let failure = invalidParameter { () throws(GatewayCommandError) in
            _ = try DeviceTarget(parsing: "C4:7C:8D:6A:3E:01", adapter: name)
        }
        #expect(failure?.name == "adapter", "\(name)")
    }

    @Test func aCharacteristicIsAUUIDNarrowedByItsServiceOrAHandle() throws {
        let device = DeviceTarget(address: try #require(BluetoothAddress("C4:7C:8D:6A:3E:01")))
        let heartRate = try CharacteristicTarget(device: device, parsing: "2a37", service: "180d")
        #expect(heartRate.selector == .uuid(try BluetoothUUID(parsing: "2a37"), service: try BluetoothUUID(parsing: "180d")))
        #expect(try CharacteristicTarget(device: device, parsing: "handle:17", service: nil).selector == .handle(17))
        #expect(try CharacteristicTarget(device: device, parsing: "HANDLE:0x0011", service: nil).selector == .handle(17))
    }

    @Test func aBadCharacteristicOrServiceIsNamed() throws {
        let device = DeviceTarget(address: try #require(BluetoothAddress("C4:7C:8D:6A:3E:01")))
        let handle = invalidParameter { () throws(GatewayCommandError) in
            _ = try CharacteristicTarget(device: device, parsing: "handle:0xzz", service: nil)
        }
        #expect(handle?.name == "characteristic")
        #expect(handle?.reason == "'handle:0xzz' is not a handle (handle:17 or handle:0x0011)")
        let uuid = invalidParameter { () throws(GatewayCommandError) in
            _ = try CharacteristicTarget(device: device, parsing: "heart", service: nil)
        }
        #expect(uuid?.name == "characteristic")
        // The service is read first, as the REST route reads its query
        // before the path's characteristic.
        let both = invalidParameter { () throws(GatewayCommandError) in
            _ = try CharacteristicTarget(device: device, parsing: "heart", service: "rate")
        }
        #expect(both?.name == "service")
    }

    @Test func aWriteTypeIsOneOfThreeInAnyCase() throws {
        #expect(try WriteCommand.type("Command") == .command)
        #expect(try WriteCommand.type("request") == .request)
        #expect(try WriteCommand.type("RELIABLE") == .reliable)
        let failure = invalidParameter { () throws(GatewayCommandError) in _ = try WriteCommand.type("fast") }
        #expect(failure?.name == "type")
        #expect(failure?.reason == "must be request, command or reliable, not 'fast'")
    }

    @Test func aTimeoutIsOneMillisecondToTheMaximum() throws {
        #expect(try GatewayCore.timeout(milliseconds: nil, maximum: .seconds(120)) == nil)
        #expect(try GatewayCore.timeout(milliseconds: 1, maximum: .seconds(120)) == .milliseconds(1))
        #expect(try GatewayCore.timeout(milliseconds: 120_000, maximum: .seconds(120)) == .seconds(120))
        for milliseconds in [0, -5, 120_001] {
            let failure = invalidParameter { () throws(GatewayCommandError) in
                _ = try GatewayCore.timeout(milliseconds: milliseconds, maximum: .seconds(120))
            }
            #expect(failure?.name == "timeout_ms")
            #expect(failure?.reason == "must be an integer from 1 to 120000, not '\(milliseconds)'")
        }
    }
}
