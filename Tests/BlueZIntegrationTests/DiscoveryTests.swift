import BlueZ
import BlueZSimulator
import DBus
import TestSupport
import Testing

@Suite(.serialized) struct DiscoveryTests {
    @Test func sessionSeesOnlyWhatMatchesItsFilter() async throws {
        let harness = try await Harness()
        let heart = try await harness.central.scan(filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate]))
        let plug = try await harness.central.scan(filter: DiscoveryFilter(namePrefix: "Smart Plug"))
        async let heartEvents = collect(heart, for: .seconds(1))
        async let plugEvents = collect(plug, for: .seconds(1))
        let (heartSeen, plugSeen) = await (heartEvents, plugEvents)
        let heartAddresses = Set(heartSeen.compactMap(Self.address))
        let plugAddresses = Set(plugSeen.compactMap(Self.address))
        #expect(heartAddresses == [Harness.strap])
        #expect(plugAddresses == [Harness.plug])
        await harness.shutdown()
    }

    @Test func duplicatesOffReportsEachDeviceOnceUnlessItsDataChanges() async throws {
        let harness = try await Harness()
        // The beacon's manufacturer data carries a counter (changes every
        // advertisement); the strap's RSSI jitters but its data does not.
        let session = try await harness.central.scan(filter: DiscoveryFilter(allowDuplicates: false))
        let seen = await collect(session, for: .seconds(1))
        let strapEvents = seen.filter { Self.address($0) == Harness.strap }
        #expect(strapEvents.count == 1)
        if case .discovered = strapEvents.first {} else { Issue.record("first event is not .discovered: \(strapEvents)") }
        let discoveredTwice = Dictionary(grouping: seen.filter { if case .discovered = $0 { true } else { false } }, by: Self.address)
            .values.contains { $0.count > 1 }
        #expect(!discoveredTwice)
        await harness.shutdown()
    }

    @Test func duplicatesOnReportsEveryAdvertisement() async throws {
        let harness = try await Harness()
        let session = try await harness.central.scan(filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate], allowDuplicates: true))
        let seen = await collect(session, for: .milliseconds(2200))
        // The strap advertises every 0.5 s (real time in the simulator),
        // its RSSI jittering: every report is an event.
        #expect(seen.count >= 3)
        #expect(seen.allSatisfy { Self.address($0) == Harness.strap })
        await harness.shutdown()
    }

    @Test func discoveryRunsWhileASessionIsConsumed() async throws {
        let harness = try await Harness()
        let consumer = Task {
            let session = try await harness.central.scan()
            for await _ in session {}
        }
        #expect(await eventually { harness.central.adapters().first?.discovering == true })
        consumer.cancel()
        // The consumer left: the last session ended, StopDiscovery was sent.
        #expect(await eventually { harness.central.adapters().first?.discovering == false })
        await harness.shutdown()
    }

    /// A consumer that leaves at any moment of the start, while bluetoothd
    /// is asked to scan included, leaves no discovery running.
    @Test func aConsumerLeavingDuringTheStartLeavesNoDiscoveryRunning() async throws {
        let harness = try await Harness()
        for delay in 0..<40 {
            let consumer = Task {
                let session = try await harness.central.scan()
                for await _ in session {}
            }
            try await Task.sleep(for: .milliseconds(delay))
            consumer.cancel()
            _ = await consumer.result
            #expect(
                await eventually { harness.central.adapters().first?.discovering == false },
                "still discovering after a consumer left \(delay) ms into its scan")
        }
        await harness.shutdown()
    }

    @Test func boundedDiscoverReturnsTheDevicesFound() async throws {
        let harness = try await Harness()
        let devices = try await harness.central.discover(filter: DiscoveryFilter(), duration: .seconds(1))
        #expect(Set(devices.map(\.address)).isSuperset(of: [Harness.strap, Harness.thermometer, Harness.plug]))
        let strap = try #require(devices.first { $0.address == Harness.strap })
        #expect(strap.advertisement.localName == "Polar H10 6A3E01")
        #expect(strap.advertisement.manufacturerData[CompanyIdentifier(0x006b)] == [0x3f, 0x00])
        #expect(strap.addressType == .random)
        await harness.shutdown()
    }

    @Test func aNewSessionReportsAtOnceWhatAnEarlierScanFound() async throws {
        // The VM rig: btvirt sends one advertising report per scan start and
        // the kernel can drop it, so a scan stream opened after a bounded
        // scan heard the peripheral only 10 s later, although bluetoothd
        // still listed it. Here every scan start's report is lost, and
        // TemporaryTimeout (1,000 s x timing 0.02 = 20 s) keeps the strap
        // listed meanwhile.
        let harness = try await Harness(options: SimulatorOptions(scanStartReport: .never, temporaryTimeout: 1000))
        try await harness.discover(Harness.strap)
        #expect(await eventually { harness.central.adapters().first?.discovering == false })
        #expect(await eventually { (try? harness.central.device(Harness.strap))?.advertisement.rssi == nil })

        let session = try await harness.central.scan(filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate]))
        // Yielded when the session began, before bluetoothd heard anything.
        let first = await firstEvent(of: session, within: .seconds(5)) { _ in true }
        guard case .discovered(let strap) = first else {
            Issue.record("the first event is not .discovered: \(String(describing: first))")
            await harness.shutdown()
            return
        }
        #expect(strap.address == Harness.strap)
        #expect(strap.advertisement.rssi == nil)
        #expect(strap.advertisement.localName == "Polar H10 6A3E01")
        await harness.shutdown()
    }

    @Test func discoveryStopsWhenTheLastSessionsEndOneAfterTheOther() async throws {
        // The e2e suite: two scan streams closed together. The first end
        // narrowed the filter (bluetoothd restarts a running scan for it),
        // the second sent StopDiscovery into that restart, which bluetoothd
        // refused while dropping us and leaving Discovering true.
        let harness = try await Harness()
        let everything = try await harness.central.scan()
        let heart = try await harness.central.scan(filter: DiscoveryFilter(serviceUUIDs: [Harness.heartRate]))
        let everythingConsumer = Task { for await _ in everything {} }
        let heartConsumer = Task { for await _ in heart {} }
        #expect(await eventually { harness.central.adapters().first?.discovering == true })
        let restarts = await harness.simulator.statistics.scanRestarts
        everythingConsumer.cancel()
        #expect(await eventually { await harness.simulator.statistics.scanRestarts == restarts + 1 })
        heartConsumer.cancel()
        #expect(await eventually { harness.central.adapters().first?.discovering == false })
        await harness.shutdown()
    }

    static func address(_ event: DiscoveryEvent) -> BluetoothAddress? {
        switch event {
        case .discovered(let device), .updated(let device), .lost(let device): device.address
        default: nil
        }
    }
}
