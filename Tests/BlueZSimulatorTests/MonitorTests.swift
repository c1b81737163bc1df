import BlueZSimulator
import DBus
import Synchronization
import Testing

/// AdvertisementMonitorManager1 as bluetoothd 5.66 -E served it in the VM rig
/// (docs/central.md, "Passive scanning").
@Suite struct MonitorTests {
    let adapter = SimulatorHarness.adapter
    let manager: InterfaceName = "org.bluez.AdvertisementMonitorManager1"
    let root: ObjectPath = "/test/monitors"

    /// Every call bluetoothd makes on the test's monitors: "<monitor> <method> [<argument>]".
    final class Calls: Sendable {
        let list = Mutex<[String]>([])
        var all: [String] { list.withLock { $0 } }
    }

    func export(_ monitors: [String: [String: Value]], on connection: Connection, calls: Calls) throws {
        let record: ExportedInterface.MethodHandler = { call in
            let argument = call.arguments.first?.objectPath.map { " " + $0.rawValue } ?? ""
            calls.list.withLock { $0.append("\(call.path.lastElement) \(call.member.rawValue)\(argument)") }
            return []
        }
        let interface = ExportedInterface(
            "org.bluez.AdvertisementMonitor1",
            methods: [
                .init("Release", handler: record), .init("Activate", handler: record),
                .init("DeviceFound", inputs: [.init("device", .objectPath)], handler: record),
                .init("DeviceLost", inputs: [.init("device", .objectPath)], handler: record),
            ],
            properties: [
                .init("Type", .string), .init("Patterns", .array(.structure([.byte, .byte, .array(.byte)]))),
                .init("RSSILowThreshold", .int16), .init("RSSIHighThreshold", .int16),
            ])
        connection.objects.addObjectManager(at: root)
        for (name, properties) in monitors {
            try connection.objects.add(interface, at: try root.appending(name), properties: properties)
        }
    }

    static func patterns(_ list: [(UInt8, UInt8, [UInt8])]) -> Value {
        .array(.structure([.byte, .byte, .array(.byte)]), list.map { .structure([.byte($0.0), .byte($0.1), .bytes($0.2)]) })
    }

    @Test func monitorsAreActivatedOrReleasedAndFindMatchingDevicesWithoutDiscovery() async throws {
        let harness = try await SimulatorHarness(options: SimulatorOptions(experimental: true, temporaryTimeout: 3000))
        defer { Task { await harness.close() } }
        #expect(try await harness.property(adapter, manager.rawValue, "SupportedMonitorTypes")?.strings == ["or_patterns"])
        #expect(try await harness.property(adapter, manager.rawValue, "SupportedFeatures")?.strings == [])
        let calls = Calls()
        let heartRate = Self.patterns([(0, 0x03, [0x0d, 0x18])])
        try export(
            [
                "good": ["Type": .string("or_patterns"), "Patterns": heartRate],
                "nopatterns": ["Type": .string("or_patterns")],
                "empty": ["Type": .string("or_patterns"), "Patterns": Self.patterns([])],
                "badtype": ["Type": .string("and_patterns"), "Patterns": heartRate],
                "lowabovehigh": [
                    "Type": .string("or_patterns"), "Patterns": heartRate, "RSSILowThreshold": .int16(-50),
                    "RSSIHighThreshold": .int16(-90),
                ],
                "long": ["Type": .string("or_patterns"), "Patterns": Self.patterns([(0, 0xff, Array(repeating: 1, count: 32))])],
                "adtype0": ["Type": .string("or_patterns"), "Patterns": Self.patterns([(0, 0x00, [1])])],
            ], on: harness.client, calls: calls)
        try await harness.call(adapter, manager, "RegisterMonitor", [.objectPath(root)])
        let releasedBeforeTheReply = calls.all
        #expect(Set(releasedBeforeTheReply) == ["nopatterns Release", "empty Release", "badtype Release", "lowabovehigh Release", "long Release", "adtype0 Release"])
        let strap = try ObjectPath(TestScenarios.heartRatePath)
        try await waitUntil("the good monitor finds the strap") { calls.all.contains("good DeviceFound \(strap)") }
        #expect(calls.all.dropFirst(releasedBeforeTheReply.count).first == "good Activate")
        #expect(!calls.all.contains { $0.hasPrefix("good DeviceFound") && !$0.hasSuffix(strap.rawValue) })
        // Heard by the passive scan, not by a discovery.
        #expect(try await harness.property(adapter, "org.bluez.Adapter1", "Discovering")?.bool == false)
        #expect(try await harness.property(strap, "org.bluez.Device1", "RSSI")?.int16 != nil)

        let again = await harness.error(adapter, manager, "RegisterMonitor", [.objectPath(root)])
        #expect(again?.name.rawValue == "org.bluez.Error.AlreadyExists")
        try await harness.call(adapter, manager, "UnregisterMonitor", [.objectPath(root)])
        #expect(calls.all.last == "good Release")
        let unknown = await harness.error(adapter, manager, "UnregisterMonitor", [.objectPath(root)])
        #expect(unknown?.name.rawValue == "org.bluez.Error.DoesNotExist")
    }

    @Test func withoutExperimentalThereIsNoMonitorManager() async throws {
        let harness = try await SimulatorHarness()
        defer { Task { await harness.close() } }
        let error = await harness.error(adapter, manager, "RegisterMonitor", [.objectPath(root)])
        #expect(error != nil)
        #expect(try await harness.property(adapter, manager.rawValue, "SupportedMonitorTypes") == nil)
    }
}
