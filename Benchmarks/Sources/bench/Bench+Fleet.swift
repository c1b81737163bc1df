import Foundation

extension Bench {
    /// A fleet on one broker (scripts/fleet-bench.py): the roam time of a
    /// fleet-kept device from its loss by the holder to the first value
    /// through the next, and 10 gateways with 1,000 simulated advertisers
    /// at rest (broker messages/s, each gateway's CPU). The script runs its
    /// own mosquitto, buses, simulators and gateways, so this phase runs
    /// after the main bus is gone. No baseline: the figures are the fleet's
    /// own cost.
    func fleet() throws {
        say("fleet: roam time, and 10 gateways with 1,000 advertisers at rest on one broker")
        let roam = try Child(
            "fleet-bench-roam",
            ["/usr/bin/env", "python3", options.root + "/scripts/fleet-bench.py", "--gateway", gatewayBinary,
             "--simulator", simulatorBinary, "--json", "roam", "--roams", "3"],
            cpu: nil, log: logs + "/fleet-bench-roam.log")
        let roamed = try roam.resultJSON(timeout: 900)
        roam.finish()
        let rest = try Child(
            "fleet-bench-rest",
            ["/usr/bin/env", "python3", options.root + "/scripts/fleet-bench.py", "--gateway", gatewayBinary,
             "--simulator", simulatorBinary, "--json", "rest"],
            cpu: nil, log: logs + "/fleet-bench-rest.log")
        let rested = try rest.resultJSON(timeout: 900)
        rest.finish()
        results["fleet"] = ["roam": roamed, "rest": rested]

        let steps = roamed["steps_p50_ms"] as? [String: Any] ?? [:]
        let roamSection = "A fleet-kept device roams: from its loss by the holder (simulator out of range) to its first value through the next gateway, 3 roams"
        add(Row(section: roamSection, metric: "roam time p50", gateway: roamed.double("value_p50_ms"), baseline: nil,
                unit: "ms", better: .lower,
                note: "max \(Format.number(roamed.double("value_max_ms"), unit: "ms")); release at \(Format.number(steps.double("release"), unit: "ms")) (the 3 s loss rule), connected at \(Format.number(steps.double("connected"), unit: "ms")), services resolved at \(Format.number(steps.double("resolved"), unit: "ms")) (simulated 0.5 s + 0.5 s)"))
        let restSection = "A fleet at rest: \(rested["gateways"] ?? "?") gateways, \(rested["devices"] ?? "?") simulated advertisers (1 s), \(rested["keeps"] ?? "?") fleet keeps, passive presence"
        add(Row(section: restSection, metric: "broker messages/s", gateway: rested.double("broker_messages_per_s"),
                baseline: nil, unit: "/s", better: .lower, note: "by kind: \(rested["by_kind_per_s"] ?? [:])"))
        add(Row(section: restSection, metric: "CPU per gateway (median)", gateway: rested.double("gateway_cpu_percent_median"),
                baseline: nil, unit: "%", better: .lower,
                note: "each: \(rested["gateway_cpu_percent"] ?? [:]); mosquitto \(Format.number(rested.double("mosquitto_cpu_percent"), unit: "%"))"))
    }
}
