import BlueZ
import BlueZSimulator
import DBus
import TestSupport
import Testing

/// Passive scan sessions against the simulated bluetoothd, with and
/// without -E (its advertisement monitor manager).
@Suite(.serialized) struct PassiveScanTests {
    static let experimental = SimulatorOptions(experimental: true, temporaryTimeout: 300)
    /// The strap's advertisement: a complete list of 16-bit UUIDs starting with 180d.
    static let heartRatePattern = AdvertisementPattern(adType: 0x03, content: [0x0d, 0x18])

    @Test func aMonitorReportsTheMatchingDevicesWithoutAnyDiscovery() async throws {
        let harness = try await Harness(options: Self.experimental)
        let session = try await harness.central.scan(mode: .passive(patterns: [Self.heartRatePattern]))
        let discovering = Recorded(false)
        let watcher = Task {
            while !Task.isCancelled {
                if harness.central.adapters().first?.discovering == true { discovering.value.withLock { $0 = true } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let seen = await collect(session, for: .milliseconds(1500)) { $0.contains { Self.address($0) == Harness.strap } }
        watcher.cancel()
        #expect(Set(seen.compactMap(Self.address)) == [Harness.strap])
        if case .discovered = seen.first {} else { Issue.record("first event is not .discovered: \(seen.prefix(2))") }
        #expect(discovering.value.withLock { $0 } == false, "a passive scan started bluetoothd's discovery")
        await harness.shutdown()
    }

    @Test func patternsDerivedFromAManufacturerFilterFindTheBeacon() async throws {
        let harness = try await Harness(options: Self.experimental)
        var filter = DiscoveryFilter()
        filter.manufacturerID = 0x004c
        let session = try await harness.central.scan(
            filter: filter, mode: .passive(patterns: AdvertisementPattern.derived(from: filter)))
        let seen = await collect(session, for: .milliseconds(1500)) { $0.contains { Self.address($0) == Harness.beacon } }
        #expect(Set(seen.compactMap(Self.address)) == [Harness.beacon])
        await harness.shutdown()
    }

    @Test func withoutExperimentalAPassiveScanIsNotSupported() async throws {
        let harness = try await Harness()
        do {
            _ = try await harness.central.scan(mode: .passive(patterns: [Self.heartRatePattern]))
            Issue.record("a passive scan started on a bluetoothd without -E")
        } catch {
            #expect(error.code == .notSupported)
            // bluetoothd (gdbus) answers UnknownMethod (VM rig); the
            // simulator's object server UnknownInterface.
            #expect(
                error.dbusName == "org.freedesktop.DBus.Error.UnknownMethod"
                    || error.dbusName == "org.freedesktop.DBus.Error.UnknownInterface")
            #expect(error.message.contains("-E"))
        }
        await harness.shutdown()
    }

    @Test func withoutExperimentalTheLowDutyFallbackScansInWindows() async throws {
        let harness = try await Harness()
        let plan = LowDutyDiscovery(window: .milliseconds(400), period: .milliseconds(1200))
        let session = try await harness.central.scan(mode: .passive(patterns: [Self.heartRatePattern], fallback: plan))
        let states = Recorded<[Bool]>([])
        let watcher = Task {
            while !Task.isCancelled {
                let now = harness.central.adapters().first?.discovering ?? false
                states.value.withLock { if $0.last != now { $0.append(now) } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        // On and off at least twice: windows, not one long scan. Waited
        // for, not timed: on a loaded machine a window can start late.
        let seen = await collect(session, for: .zero) { events in
            states.value.withLock { $0.count(where: { $0 }) >= 2 } && events.contains { Self.address($0) == Harness.strap }
        }
        watcher.cancel()
        let changes = states.value.withLock { $0 }
        #expect(seen.compactMap(Self.address).contains(Harness.strap))
        #expect(changes.count(where: { $0 }) >= 2, "discovering went \(changes)")
        #expect(await eventually { harness.central.adapters().first?.discovering == false })
        await harness.shutdown()
    }

    @Test func invalidPatternsAreRefusedBeforeBluetoothdIsAsked() async throws {
        let harness = try await Harness(options: Self.experimental)
        for patterns in [[], [AdvertisementPattern(adType: 0xff, content: Array(repeating: 1, count: 32))]] {
            do {
                _ = try await harness.central.scan(mode: .passive(patterns: patterns))
                Issue.record("scan with \(patterns) started")
            } catch {
                #expect(error.code == .invalidArguments)
            }
        }
        await harness.shutdown()
    }

    @Test func theMonitorIsRegisteredAgainAfterBluetoothdRestarts() async throws {
        let harness = try await Harness(options: Self.experimental)
        let session = try await harness.central.scan(mode: .passive(patterns: [Self.heartRatePattern]))
        let events = Task { await collect(session, for: .seconds(6), until: Self.heardAgainAfterResuming) }
        try await Task.sleep(for: .milliseconds(800))
        try await harness.simulator.restart()
        let seen = await events.value
        let interrupted = seen.firstIndex { if case .interrupted = $0 { true } else { false } }
        let resumed = seen.firstIndex { $0 == .resumed }
        #expect(interrupted != nil && resumed != nil, "events: \(seen.map(Self.kind))")
        if let resumed {
            // Heard again after the restart, through the new registration.
            #expect(seen[resumed...].contains { if case .discovered = $0 { Self.address($0) == Harness.strap } else { false } })
        }
        await harness.shutdown()
    }

    @Test func aPassiveSessionResumesOnANewBusConnection() async throws {
        let harness = try await Harness(options: Self.experimental)
        let central = harness.central
        let session = try await central.scan(mode: .passive(patterns: [Self.heartRatePattern]))
        let events = Task { await collect(session, for: .seconds(4), until: Self.heardAgainAfterResuming) }
        try await Task.sleep(for: .milliseconds(500))
        harness.connection.close()
        #expect(await eventually { if case .busDisconnected = central.availability { true } else { false } })
        let replacement = try await harness.bus.connect()
        try await central.attach(replacement)
        let seen = await events.value
        let resumed = seen.firstIndex { $0 == .resumed }
        #expect(resumed != nil, "events: \(seen.map(Self.kind))")
        if let resumed {
            // The monitor was exported again on the new connection, and found the strap.
            #expect(seen[resumed...].contains { Self.address($0) == Harness.strap }, "events: \(seen.map(Self.kind))")
        }
        await central.stop()
        replacement.close()
        await harness.simulator.stop()
        harness.simulatorConnection.close()
    }

    @Test func sessionsOneAfterAnotherEachGetAMonitorAndLeaveNoneBehind() async throws {
        let harness = try await Harness(options: Self.experimental)
        let root = ObjectPath(unchecked: "/org/blegateway/monitor/hci0")
        for _ in 0..<3 {
            let session = try await harness.central.scan(mode: .passive(patterns: [Self.heartRatePattern]))
            #expect(harness.connection.objects.paths(under: root).count == 1)
            let seen = await collect(session, for: .milliseconds(600)) { $0.contains { Self.address($0) == Harness.strap } }
            #expect(seen.compactMap(Self.address).contains(Harness.strap))
            #expect(await eventually { harness.connection.objects.paths(under: root).isEmpty })
        }
        await harness.shutdown()
    }

    /// The strap heard again after the session resumed.
    @Sendable static func heardAgainAfterResuming(_ events: [DiscoveryEvent]) -> Bool {
        guard let resumed = events.firstIndex(where: { $0 == .resumed }) else { return false }
        return events[resumed...].contains { address($0) == Harness.strap }
    }

    static func address(_ event: DiscoveryEvent) -> BluetoothAddress? {
        switch event {
        case .discovered(let device), .updated(let device), .lost(let device), .silent(let device): device.address
        default: nil
        }
    }

    static func kind(_ event: DiscoveryEvent) -> String {
        switch event {
        case .discovered: "discovered"
        case .updated: "updated"
        case .lost: "lost"
        case .silent: "silent"
        case .interrupted: "interrupted"
        case .resumed: "resumed"
        }
    }
}
