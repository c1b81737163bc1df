import BlueZ
import BlueZSimulator
import DBus
import GatewayCore
import TestSupport
import Testing

/// A private bus with the simulator serving `org.bluez` on one connection
/// and the core over a `Central` on another: the two talk only over D-Bus.
final class CoreHarness: Sendable {
    let bus: TestBus
    let simulatorConnection: Connection
    let simulator: SimulatedBlueZ
    let connection: Connection
    let central: Central
    let core: GatewayCore

    /// The default scenario's smart plug, with its relay (read, write,
    /// notify, echoing what is written) and the relay's user description.
    static let plug = "D0:73:D5:22:41:9C"
    static let relay = "0000ff01-0000-1000-8000-00805f9b34fb"

    init(
        scenario: Scenario = .default, defaultAdapter: String? = nil, keptStore: (any KeptDeviceStore)? = nil,
        keptQuota: (any ClientQuota<AdapterDevice>)? = nil, subscriptionStore: (any StandingSubscriptionStore)? = nil,
        subscriptionQuota: (any ClientQuota<Int64>)? = nil, publications: PublicationHarness = PublicationHarness(),
        log: EventLog<LoggedEvent>? = nil, events: (any CoreEventPublishing)? = nil
    ) async throws {
        bus = try TestBus()
        simulatorConnection = try await bus.connect()
        var scenario = scenario
        scenario.timing = 0.02
        simulator = try await SimulatedBlueZ.start(
            on: simulatorConnection, scenario: scenario, options: SimulatorOptions(temporaryTimeout: 300))
        connection = try await bus.connect()
        central = Central(connection: connection)
        try await central.start()
        core = GatewayCore(
            central: central, keeper: ConnectionKeeper(central: central), defaultAdapter: defaultAdapter,
            keptStore: keptStore, keptQuota: keptQuota, subscriptionStore: subscriptionStore,
            subscriptionQuota: subscriptionQuota, publicationStore: publications.store,
            applicationQuota: publications.applicationQuota, advertisementQuota: publications.advertisementQuota,
            log: log, events: events)
    }

    func shutdown() async {
        core.stop()
        await central.stop()
        connection.close()
        await simulator.stop()
        simulatorConnection.close()
    }

    /// Scans until `address` is found, then connects it through the core.
    func connected(_ address: String, adapter: String? = nil) async throws -> DeviceTarget {
        let target = try DeviceTarget(parsing: address, adapter: adapter)
        let session = try await central.scan(filter: DiscoveryFilter())
        let found = await firstEvent(of: session, within: .seconds(20)) { event in
            if case .discovered(let device) = event, device.address == target.address { return true }
            return false
        }
        guard found != nil else { throw CoreHarnessError("\(address) was not discovered") }
        _ = try await core.connect(ConnectCommand(device: target, timeout: .seconds(20)))
        return target
    }
}

/// Runs `body` with a harness, shut down after it whether it passes or throws.
func withCoreHarness(
    scenario: Scenario = .default, defaultAdapter: String? = nil, keptStore: (any KeptDeviceStore)? = nil,
    keptQuota: (any ClientQuota<AdapterDevice>)? = nil, subscriptionStore: (any StandingSubscriptionStore)? = nil,
    subscriptionQuota: (any ClientQuota<Int64>)? = nil, publications: PublicationHarness = PublicationHarness(),
    log: EventLog<LoggedEvent>? = nil, events: (any CoreEventPublishing)? = nil,
    _ body: (CoreHarness) async throws -> Void
) async throws {
    let harness = try await CoreHarness(
        scenario: scenario, defaultAdapter: defaultAdapter, keptStore: keptStore, keptQuota: keptQuota,
        subscriptionStore: subscriptionStore, subscriptionQuota: subscriptionQuota, publications: publications,
        log: log, events: events)
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

struct CoreHarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The BlueZ error `body` failed with; nil (and an issue recorded) when it
/// succeeded or failed otherwise.
func bluezFailure(_ body: () async throws(GatewayCommandError) -> Void) async -> BlueZError? {
    do {
        try await body()
        Issue.record("the command succeeded")
    } catch {
        guard case .bluez(let bluez) = error else {
            Issue.record("\(error)")
            return nil
        }
        return bluez
    }
    return nil
}

/// The error `body` failed with; nil (and an issue) if it succeeded.
func failure(_ body: () async throws(GatewayCommandError) -> Void) async -> GatewayCommandError? {
    do {
        try await body()
        Issue.record("the command succeeded")
        return nil
    } catch {
        return error
    }
}

/// The store and quotas of the peripheral role a harness's core is given
/// (none: nothing stored, no limit).
struct PublicationHarness: Sendable {
    var store: (any PublicationStore)?
    var applicationQuota: (any ClientQuota<String>)?
    var advertisementQuota: (any ClientQuota<String>)?
}
