import ArgumentParser
import GatewayAPI

/// The `serve` options that limit what clients create (see `Quotas`).
struct QuotaOptions: ParsableArguments {
    static let defaults = Quotas()

    @Option(
        .maxKeptDevices,
        help: ArgumentHelp(
            "The most devices kept connected, all clients together.",
            discussion: "Past it, PUT /v1/devices/{address}/keep answers 507. Every kept device that stays away costs a connection attempt with backoff."))
    var keptDevices = Self.defaults.keptDevices.total

    @Option(
        .maxKeptDevicesPerClient,
        help: "The most devices one client keeps connected (0: only the total applies); past it, 429.")
    var keptDevicesPerClient = Self.defaults.keptDevices.perClient ?? 0

    @Option(
        .maxSubscriptions,
        help: "The most standing subscriptions, all clients together; past it, 507.")
    var subscriptions = Self.defaults.standingSubscriptions.total

    @Option(
        .maxSubscriptionsPerClient,
        help: "The most standing subscriptions one client makes (0: only the total applies); past it, 429.")
    var subscriptionsPerClient = Self.defaults.standingSubscriptions.perClient ?? 0

    @Option(
        .maxApplications,
        help: "The most peripheral GATT applications, all clients together; past it, 507.")
    var applications = Self.defaults.applications.total

    @Option(
        .maxApplicationsPerClient,
        help: "The most peripheral GATT applications one client publishes (0: only the total applies); past it, 429.")
    var applicationsPerClient = Self.defaults.applications.perClient ?? 0

    @Option(
        .maxAdvertisements,
        help: "The most advertisements, all clients together; past it, 507.")
    var advertisements = Self.defaults.advertisements.total

    @Option(
        .maxAdvertisementsPerClient,
        help: ArgumentHelp(
            "The most advertisements one client publishes (0: only the total applies); past it, 429.",
            discussion: "A client is the API key's holder when --api-key is set (every caller with the key is one client), else the peer's IP address. What was created before a restart counts against the client that created it."))
    var advertisementsPerClient = Self.defaults.advertisements.perClient ?? 0

    /// The limits, checked: `--NAME` 1 to 100000, `--NAME-per-client` 0
    /// to 100000 (0 for none).
    func quotas() throws -> Quotas {
        var quotas = Quotas()
        quotas.keptDevices = try limit(.maxKeptDevices, keptDevices, .maxKeptDevicesPerClient, keptDevicesPerClient)
        quotas.standingSubscriptions = try limit(
            .maxSubscriptions, subscriptions, .maxSubscriptionsPerClient, subscriptionsPerClient)
        quotas.applications = try limit(.maxApplications, applications, .maxApplicationsPerClient, applicationsPerClient)
        quotas.advertisements = try limit(
            .maxAdvertisements, advertisements, .maxAdvertisementsPerClient, advertisementsPerClient)
        return quotas
    }

    private func limit(_ totalOption: ServeOption, _ total: Int, _ perClientOption: ServeOption, _ perClient: Int) throws
        -> Quotas.Limit
    {
        guard (1...100_000).contains(total) else { throw ValidationError("--\(totalOption.rawValue) must be 1 to 100000") }
        guard (0...100_000).contains(perClient) else {
            throw ValidationError("--\(perClientOption.rawValue) must be 0 to 100000")
        }
        return Quotas.Limit(perClient: perClient == 0 ? nil : perClient, total: total)
    }
}
