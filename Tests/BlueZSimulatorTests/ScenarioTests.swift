import Foundation
import BlueZSimulator
import Testing

@Suite struct ScenarioTests {
    @Test func theDefaultScenarioParses() throws {
        let scenario = try Scenario.parse(Scenario.defaultYAML)
        #expect(scenario.adapters.map(\.id) == ["hci0"])
        #expect(scenario.devices.count == 8)
        #expect(
            scenario.devices.map(\.name) == ["Polar H10 6A3E01", "Thermo 1B07", "Smart Plug 419C", nil, nil, nil, nil, "ATC_8E2F55"])
        #expect(scenario.devices[4].advertising.data == [0x24: Array("\u{17}//google.com".utf8)])
        let strap = try #require(scenario.devices.first)
        #expect(strap.advertising.uuids == [GATTUUID(short: 0x180d)])
        #expect(strap.advertising.manufacturerData == [0x006b: [0x3f, 0x00]])
        #expect(strap.services.map(\.uuid.string).first == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(Scenario.default.devices.count == 8)
    }

    @Test func jsonIsAScenarioToo() throws {
        let scenario = try Scenario.parse(
            """
            {"timing": 0.5, "devices": [{"address": "11:22:33:44:55:66", "name": "J",
              "services": [{"uuid": "180f", "characteristics": [{"uuid": "2a19", "flags": ["read"], "value": "64"}]}]}]}
            """)
        #expect(scenario.timing == 0.5)
        #expect(scenario.adapters.map(\.id) == ["hci0"])
        #expect(scenario.devices.first?.services.first?.characteristics.first?.value == [0x64])
    }

    @Test func behavioursParse() throws {
        let scenario = try Scenario.parse(
            """
            devices:
              - address: "11:22:33:44:55:66"
                connection: { delay: 0.1, failures: 2, error: le-connection-abort-by-local, mtu: 23 }
                range: { leaveAfter: 5, returnAfter: 2 }
                pairing: { accept: false }
                services:
                  - uuid: "12345678-1234-5678-1234-56789abcdef0"
                    characteristics:
                      - { uuid: "0001", flags: [read, notify], behaviour: { kind: counter, size: 2, rate: 100 } }
                      - { uuid: "0002", flags: [write], behaviour: { kind: control-point, accept: ["01", "02"], error: 0x81 } }
                      - { uuid: "0003", flags: [read, write], behaviour: echo, encrypted: true }
                      - { uuid: "0004", flags: [read], behaviour: { kind: failing, error: 0x0e } }
                      - { uuid: "0005", flags: [read], behaviour: { kind: sequence, values: ["00", "01"], rate: 2 } }
            """)
        let device = try #require(scenario.devices.first)
        #expect(device.connection.failures == 2)
        #expect(device.connection.mtu == 23)
        #expect(Scenario.default.devices.allSatisfy { $0.connection.mtu == 517 })
        #expect(device.range?.leaveAfter == 5)
        #expect(device.pairing.accept == false)
        let characteristics = try #require(device.services.first?.characteristics)
        #expect(characteristics.count == 5)
        #expect(characteristics[2].encrypted)
        guard case .counter(_, _, let size, let rate) = characteristics[0].behaviour else {
            Issue.record("not a counter")
            return
        }
        #expect(size == 2 && rate == 100)
        guard case .controlPoint(let accept, let error) = characteristics[1].behaviour else {
            Issue.record("not a control point")
            return
        }
        #expect(accept == [[1], [2]] && error == 0x81)
    }

    @Test(arguments: [
        ("devices:\n  - address: nope\n", 2, "expected a Bluetooth address"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    rsi: -50\n", 3, "unknown key 'rsi'"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    services:\n      - uuid: xyz\n", 4, "expected a UUID"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    rssi: loud\n", 3, "expected an integer"),
        ("devices: [\n", 2, "YAML syntax"),
        (
            "devices:\n  - address: \"11:22:33:44:55:66\"\n    services:\n      - uuid: \"180d\"\n        characteristics:\n          - uuid: \"2a37\"\n            behaviour: { kind: warp-drive }\n",
            7, "unknown behaviour 'warp-drive'"
        ),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    adapter: hci7\n", 2, "no adapter 'hci7'"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    heardBy: {hci0: -50, hci3: -60}\n", 2, "heardBy names no adapter of this scenario: 'hci3'"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    adapter: hci0\n    heardBy: {hci0: -50}\n", 4, "either 'adapter' or 'heardBy'"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    heardBy: {}\n", 3, "heardBy needs at least one adapter"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    heardBy: {hci0: 30}\n", 3, "30 is out of range -127...20"),
        ("connectedSignal: sometimes\n", 1, "always, never or a probability"),
        ("devices:\n  - address: \"11:22:33:44:55:66\"\n    connection: { mtu: 22 }\n", 3, "22 is out of range 23...517"),
    ])
    func badScenariosSayWhereAndWhy(text: String, line: Int, message: String) {
        do {
            _ = try Scenario.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func aDeviceHeardBySeveralAdaptersIsOneObjectPerAdapterWithItsOwnRSSI() throws {
        let scenario = try Scenario.parse(
            """
            adapters: [{id: hci0}, {id: hci1}]
            devices:
              - address: "11:22:33:44:55:66"
                heardBy: {hci1: -72, hci0: -50}
            """)
        let device = try #require(scenario.devices.first)
        #expect(device.heardBy == ["hci0": -50, "hci1": -72])
        #expect(device.placements.map(\.adapter) == ["hci0", "hci1"])
        #expect(device.placements.map(\.rssi) == [-50, -72])
        #expect(device.placements.allSatisfy { $0.heardBy.isEmpty && $0.address == device.address })
    }

    @Test func theConnectedSignalIsAScenarioOption() throws {
        #expect(try Scenario.parse("connectedSignal: always\n").connectedSignal == .always)
        #expect(try Scenario.parse("connectedSignal: 0.25\n").connectedSignal == .sometimes(0.25))
        #expect(try Scenario.parse("timing: 1\n").connectedSignal == nil)
    }

    @Test func loadingAFileNamesIt() throws {
        let path = "/tmp/bluez-sim-test-\(UInt32.random(in: 0...UInt32.max)).yaml"
        try "devices:\n  - address: 1\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        do {
            _ = try Scenario.load(path: path)
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix(path + ":2:"), "\(error)")
        }
        #expect(throws: ScenarioError.self) { try Scenario.load(path: "/nonexistent/scenario.yaml") }
    }

    /// libyaml composes the document: aliases stand for their anchors,
    /// only unquoted words are booleans, and a second document is refused.
    @Test func yamlAliasesQuotesAndDocuments() throws {
        let scenario = try Scenario.parse(
            """
            devices:
              - address: "11:22:33:44:55:66"
                paired: yes
                connection: &slow { delay: 2 }
              - address: "11:22:33:44:55:67"
                connection: *slow
            """)
        #expect(scenario.devices.map(\.connection.delay) == [2, 2])
        #expect(scenario.devices.first?.paired == true)
        #expect(throws: ScenarioError.self) {
            try Scenario.parse("devices:\n  - address: \"11:22:33:44:55:66\"\n    paired: \"true\"\n")
        }
        do {
            _ = try Scenario.parse("timing: 1\n---\ntiming: 2\n")
            Issue.record("a second document was accepted")
        } catch {
            #expect(error.line == 2, "\(error)")
            #expect(error.description.contains("single document"), "\(error)")
        }
        do {
            _ = try Scenario.parse("devices: &x [*x]\n")
            Issue.record("a recursive alias was accepted")
        } catch {
            #expect(error.description.contains("nested more than"), "\(error)")
        }
        #expect(throws: ScenarioError.self) { try Scenario.parse("# nothing\n") }
    }
}
