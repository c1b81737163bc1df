import ArgumentParser
import GatewayAPI

/// The `serve` options that limit what clients create (see `Quotas`).
struct QuotaOptions: ParsableArguments {
    static let defaults = Quotas()

    @Option(
        name: .customLong("max-kept-devices"),
        help: ArgumentHelp(
            "The most devices kept connected, all clients together. (default \(Self.defaults.keptDevices.total)) [BLEGATEWAY_MAX_KEPT_DEVICES]",
            discussion: "Past it, PUT /v1/devices/{address}/keep answers 507. Every kept device that stays away costs a connection attempt with backoff."))
    var keptDevices: Int?

    @Option(
        name: .customLong("max-kept-devices-per-client"),
        help: "The most devices one client keeps connected (0: only the total applies); past it, 429. (default \(Self.defaults.keptDevices.perClient ?? 0)) [BLEGATEWAY_MAX_KEPT_DEVICES_PER_CLIENT]")
    var keptDevicesPerClient: Int?

    @Option(
        name: .customLong("max-subscriptions"),
        help: "The most standing subscriptions, all clients together; past it, 507. (default \(Self.defaults.standingSubscriptions.total)) [BLEGATEWAY_MAX_SUBSCRIPTIONS]")
    var subscriptions: Int?

    @Option(
        name: .customLong("max-subscriptions-per-client"),
        help: "The most standing subscriptions one client makes (0: only the total applies); past it, 429. (default \(Self.defaults.standingSubscriptions.perClient ?? 0)) [BLEGATEWAY_MAX_SUBSCRIPTIONS_PER_CLIENT]")
    var subscriptionsPerClient: Int?

    @Option(
        name: .customLong("max-applications"),
        help: "The most peripheral GATT applications, all clients together; past it, 507. (default \(Self.defaults.applications.total)) [BLEGATEWAY_MAX_APPLICATIONS]")
    var applications: Int?

    @Option(
        name: .customLong("max-applications-per-client"),
        help: "The most peripheral GATT applications one client publishes (0: only the total applies); past it, 429. (default \(Self.defaults.applications.perClient ?? 0)) [BLEGATEWAY_MAX_APPLICATIONS_PER_CLIENT]")
    var applicationsPerClient: Int?

    @Option(
        name: .customLong("max-advertisements"),
        help: "The most advertisements, all clients together; past it, 507. (default \(Self.defaults.advertisements.total)) [BLEGATEWAY_MAX_ADVERTISEMENTS]")
    var advertisements: Int?

    @Option(
        name: .customLong("max-advertisements-per-client"),
        help: ArgumentHelp(
            "The most advertisements one client publishes (0: only the total applies); past it, 429. (default \(Self.defaults.advertisements.perClient ?? 0)) [BLEGATEWAY_MAX_ADVERTISEMENTS_PER_CLIENT]",
            discussion: "A client is the API key's holder when --api-key is set (every caller with the key is one client), else the peer's IP address. What was created before a restart counts against the client that created it."))
    var advertisementsPerClient: Int?

    /// The limits, from the options, else the environment, else the defaults.
    func quotas(environment: [String: String]) throws -> Quotas {
        var quotas = Self.defaults
        quotas.keptDevices = try limit(
            "max-kept-devices", keptDevices, keptDevicesPerClient, environment, default: quotas.keptDevices)
        quotas.standingSubscriptions = try limit(
            "max-subscriptions", subscriptions, subscriptionsPerClient, environment, default: quotas.standingSubscriptions)
        quotas.applications = try limit(
            "max-applications", applications, applicationsPerClient, environment, default: quotas.applications)
        quotas.advertisements = try limit(
            "max-advertisements", advertisements, advertisementsPerClient, environment, default: quotas.advertisements)
        return quotas
    }

    /// One resource's limits: `--NAME` (1 to 100000) and
    /// `--NAME-per-client` (0 to 100000, 0 for none).
    private func limit(
        _ name: String, _ total: Int?, _ perClient: Int?, _ environment: [String: String], default fallback: Quotas.Limit
    ) throws -> Quotas.Limit {
        let variable = "BLEGATEWAY_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
        func value(_ option: Int?, _ variable: String) throws -> Int? {
            if let option { return option }
            guard let text = environment[variable] else { return nil }
            guard let number = Int(text) else { throw ValidationError("\(variable) must be a number, not '\(text)'") }
            return number
        }
        let total = try value(total, variable) ?? fallback.total
        guard (1...100_000).contains(total) else { throw ValidationError("--\(name) must be 1 to 100000") }
        let perClient = try value(perClient, variable + "_PER_CLIENT") ?? fallback.perClient ?? 0
        guard (0...100_000).contains(perClient) else { throw ValidationError("--\(name)-per-client must be 0 to 100000") }
        return Quotas.Limit(perClient: perClient == 0 ? nil : perClient, total: total)
    }
}
