import BlueZSimulator

/// Scenarios for tests, written in the scenario format itself.
enum TestScenarios {
    static let heartRate = "C4:7C:8D:6A:3E:01"
    static let heartRatePath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_01"
    static let plug = "D0:73:D5:22:41:9C"
    static let plugPath = "/org/bluez/hci0/dev_D0_73_D5_22_41_9C"
    static let beacon = "F1:E2:D3:C4:B5:A6"
    static let beaconPath = "/org/bluez/hci0/dev_F1_E2_D3_C4_B5_A6"

    /// The default scenario's first four devices (strap, thermometer, plug,
    /// iBeacon) with fast advertising (for quick discovery). The
    /// advertisement-only beacons and sensors after them would only add
    /// load here; `everything` has them.
    static var small: Scenario {
        var scenario = everything
        scenario.devices = Array(scenario.devices.prefix(4))
        return scenario
    }

    /// The whole default scenario with fast advertising.
    static var everything: Scenario {
        var scenario = Scenario.default
        for index in scenario.devices.indices { scenario.devices[index].advertising.interval = 0.05 }
        return scenario
    }

    static func address(_ text: String) -> DeviceAddress {
        DeviceAddress(text) ?? DeviceAddress(bytes: [0, 0, 0, 0, 0, 0])!
    }
}
